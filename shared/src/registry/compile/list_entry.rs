//! A tool's `tools/list` entry written around its schemas' texts (CONTRACT T1, T4): the fields
//! before the schemas and the fields after them, as serde_json writes them.

use std::borrow::Cow;

use serde_json::Value;

/// The start of a tool's `tools/list` entry (CONTRACT T1): its fields before the schemas, as
/// serde_json writes them, and the `inputSchema` key: `{"name":…,"title":…,"description":…,
/// "inputSchema":`.
pub(super) fn entry_head(
    name: &str,
    title: Option<&str>,
    description: Option<&str>,
) -> Option<Box<str>> {
    let fields = [("title", title), ("description", description)];
    let capacity = fields
        .iter()
        .map(|(key, value)| value.map_or(0, |value| key.len() + value.len() + 6))
        .sum::<usize>()
        + name.len()
        + 32;
    let mut head = Vec::with_capacity(capacity);
    head.extend_from_slice(br#"{"name":"#);
    serde_json::to_writer(&mut head, name).ok()?;
    write_fields(&mut head, fields)?;
    head.extend_from_slice(br#","inputSchema":"#);
    String::from_utf8(head).ok().map(String::into_boxed_str)
}

/// Writes `,"<key>":<value>` for each field that has a value (keys that need no escapes),
/// values as serde_json writes them.
fn write_fields<T: serde::Serialize + ?Sized>(
    out: &mut Vec<u8>,
    fields: [(&str, Option<&T>); 2],
) -> Option<()> {
    for (key, value) in fields {
        if let Some(value) = value {
            out.extend_from_slice(b",\"");
            out.extend_from_slice(key.as_bytes());
            out.extend_from_slice(b"\":");
            serde_json::to_writer(&mut *out, value).ok()?;
        }
    }
    Some(())
}

/// The end of a tool's `tools/list` entry (CONTRACT T1): its fields after the schemas, as
/// serde_json writes them, and the closing `}`.
pub(super) fn entry_tail(
    annotations: Option<&Value>,
    icons: Option<&Value>,
) -> Option<Cow<'static, str>> {
    if annotations.is_none() && icons.is_none() {
        return Some(Cow::Borrowed("}"));
    }
    let mut tail = Vec::new();
    write_fields(&mut tail, [("annotations", annotations), ("icons", icons)])?;
    tail.push(b'}');
    String::from_utf8(tail).ok().map(Cow::Owned)
}
