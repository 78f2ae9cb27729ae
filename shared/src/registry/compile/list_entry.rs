//! A tool's `tools/list` entry written around its schemas' texts (CONTRACT T1, T4): the fields
//! before the schemas and the fields after them, as serde_json writes them.

use std::borrow::Cow;

use serde_json::Value;

use crate::registry::search::Span;

/// Where a tool's name, title and description lie in its entry's head (`None`: absent).
pub(super) type HeadFields = [Option<Span>; 3];

/// The start of a tool's `tools/list` entry (CONTRACT T1): its fields before the schemas, as
/// serde_json writes them, and the `inputSchema` key: `{"name":…,"title":…,"description":…,
/// "inputSchema":`; with where the name, title and description lie in it (each `None` when
/// absent) for the search (CONTRACT S4), unless one was written with escapes.
pub(super) fn entry_head(
    name: &str,
    title: Option<&str>,
    description: Option<&str>,
) -> Option<(Box<str>, Option<HeadFields>)> {
    let fields = [(r#"{"name":"#, Some(name)), (r#","title":"#, title)];
    let fields = [fields[0], fields[1], (r#","description":"#, description)];
    let capacity = fields
        .iter()
        .map(|(key, value)| value.map_or(0, |value| key.len() + value.len() + 2))
        .sum::<usize>()
        + 16;
    let mut head = Vec::with_capacity(capacity);
    let mut spans = Some([None; 3]);
    for (at, (key, value)) in fields.into_iter().enumerate() {
        if let Some(value) = value {
            head.extend_from_slice(key.as_bytes());
            let start = head.len();
            serde_json::to_writer(&mut head, value).ok()?;
            // Written as `"` + the text + `"`: no escapes.
            let plain = head.len() - start == value.len() + 2;
            let span = (u32::try_from(start + 1).ok()).zip(u32::try_from(head.len() - 1).ok());
            match (spans.as_mut().and_then(|spans| spans.get_mut(at)), span) {
                (Some(slot), Some(span)) if plain => *slot = Some(span),
                _ => spans = None,
            }
        }
    }
    head.extend_from_slice(br#","inputSchema":"#);
    let head = String::from_utf8(head).ok()?.into_boxed_str();
    Some((head, spans))
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
