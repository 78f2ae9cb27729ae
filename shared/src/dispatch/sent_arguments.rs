//! `arguments` as the request wrote them (CONTRACT X11): the JSON a Tool Service receives keeps
//! every scalar's text (`1e2`, `1.0`, `-0`, `12345678901234567890123`, a string's escapes)
//! exactly as the agent sent it, without the whitespace between tokens. Validation (X2) judges
//! the parsed values; this module only decides which bytes travel.
//!
//! The reader runs over a body that `serde_json` already accepted as one JSON value, so it only
//! has to find token boundaries; anything it does not expect makes it give up (`None`), and the
//! caller then forwards `serde_json`'s own serialization instead. A key repeated in one object
//! keeps its first place and takes its last value, as `serde_json`'s map does, so the Tool
//! Service receives the very value that was validated.

use std::borrow::Cow;
use std::collections::HashMap;

/// Nesting deeper than `serde_json`'s own limit (128) never reaches here; a reader that meets it
/// gives up rather than recurse further.
const MAX_DEPTH: usize = 160;

/// An object holds a key index from this many members on, so that a repeated key is found in
/// constant time however many members an object has.
const INDEXED_FROM: usize = 16;

/// One JSON value as the request wrote it.
#[derive(Debug, PartialEq)]
pub(super) enum Sent<'a> {
    /// A string (quotes and escapes included), a number, `true`, `false` or `null`: its text.
    Scalar(&'a str),
    /// An array's items.
    Array(Vec<Sent<'a>>),
    /// An object's members, each key once, in the order of its first appearance.
    Object(Vec<Member<'a>>),
}

/// One member of an object.
#[derive(Debug, PartialEq)]
pub(super) struct Member<'a> {
    /// The key's value (escapes decoded): what a member is looked up by.
    pub(super) key: Cow<'a, str>,
    /// The key as written, quotes included.
    raw_key: &'a str,
    /// The member's value.
    pub(super) value: Sent<'a>,
}

impl<'a> Sent<'a> {
    /// Reads one JSON text (surrounding whitespace allowed); `None` when it is not a JSON text
    /// the reader can split.
    pub(super) fn read(text: &'a str) -> Option<Self> {
        let mut reader = Reader { text, at: 0 };
        let value = reader.value(0)?;
        reader.skip_whitespace();
        (reader.at == text.len()).then_some(value)
    }

    /// The member `key` of an object (`Ok(None)` when it has none); `Err` for a value that is
    /// no object.
    fn into_member(self, key: &str) -> Result<Option<Self>, ()> {
        match self {
            Self::Object(members) => {
                Ok(members.into_iter().find(|m| m.key == key).map(|m| m.value))
            }
            _ => Err(()),
        }
    }

    /// Appends the value as compact JSON: every scalar's text as it was written.
    pub(super) fn write(&self, out: &mut Vec<u8>) {
        match self {
            Self::Scalar(text) => out.extend_from_slice(text.as_bytes()),
            Self::Array(items) => {
                out.push(b'[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(b',');
                    }
                    item.write(out);
                }
                out.push(b']');
            }
            Self::Object(members) => write_members(members.iter(), out),
        }
    }

    /// The value as compact JSON.
    pub(super) fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write(&mut out);
        out
    }
}

/// Appends `{"key":value,…}` for `members`, keys as written.
pub(super) fn write_members<'m, 'a: 'm>(
    members: impl Iterator<Item = &'m Member<'a>>,
    out: &mut Vec<u8>,
) {
    out.push(b'{');
    for (i, member) in members.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(member.raw_key.as_bytes());
        out.push(b':');
        member.value.write(out);
    }
    out.push(b'}');
}

/// A cursor over a JSON text.
struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Consumes `byte` after optional whitespace.
    fn eat(&mut self, byte: u8) -> bool {
        self.skip_whitespace();
        let found = self.peek() == Some(byte);
        if found {
            self.at += 1;
        }
        found
    }

    fn value(&mut self, depth: usize) -> Option<Sent<'a>> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.skip_whitespace();
        match self.peek()? {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => self.string().map(Sent::Scalar),
            _ => self.literal().map(Sent::Scalar),
        }
    }

    /// A string token, quotes included.
    fn string(&mut self) -> Option<&'a str> {
        let start = self.at;
        self.at += 1;
        loop {
            match self.peek()? {
                b'\\' => self.at += 2,
                b'"' => {
                    self.at += 1;
                    return self.text.get(start..self.at);
                }
                _ => self.at += 1,
            }
        }
    }

    /// A number, `true`, `false` or `null`: the bytes up to the next delimiter.
    fn literal(&mut self) -> Option<&'a str> {
        let start = self.at;
        while let Some(byte) = self.peek() {
            if matches!(
                byte,
                b',' | b']' | b'}' | b':' | b' ' | b'\t' | b'\n' | b'\r' | b'"' | b'[' | b'{'
            ) {
                break;
            }
            self.at += 1;
        }
        (self.at > start).then(|| self.text.get(start..self.at))?
    }

    fn array(&mut self, depth: usize) -> Option<Sent<'a>> {
        self.at += 1;
        let mut items = Vec::new();
        if self.eat(b']') {
            return Some(Sent::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            if self.eat(b']') {
                return Some(Sent::Array(items));
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    fn object(&mut self, depth: usize) -> Option<Sent<'a>> {
        self.at += 1;
        let mut members: Vec<Member<'a>> = Vec::new();
        let mut index: HashMap<Cow<'a, str>, usize> = HashMap::new();
        if self.eat(b'}') {
            return Some(Sent::Object(members));
        }
        loop {
            self.skip_whitespace();
            if self.peek() != Some(b'"') {
                return None;
            }
            let raw_key = self.string()?;
            if !self.eat(b':') {
                return None;
            }
            let value = self.value(depth + 1)?;
            let key = decode_key(raw_key)?;
            // A repeated key keeps its place and takes the later value (serde_json's map).
            let existing = if members.len() < INDEXED_FROM {
                members.iter().position(|m| m.key == key)
            } else {
                if index.is_empty() {
                    index.extend(members.iter().enumerate().map(|(i, m)| (m.key.clone(), i)));
                }
                index.get(&key).copied()
            };
            if let Some(i) = existing {
                members[i].value = value;
            } else {
                if !index.is_empty() {
                    index.insert(key.clone(), members.len());
                }
                members.push(Member {
                    key,
                    raw_key,
                    value,
                });
            }
            if self.eat(b'}') {
                return Some(Sent::Object(members));
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }
}

/// A key's value: the text between the quotes, or its escapes decoded by `serde_json`.
fn decode_key(raw_key: &str) -> Option<Cow<'_, str>> {
    let inner = raw_key.get(1..raw_key.len().checked_sub(1)?)?;
    if inner.contains('\\') {
        serde_json::from_str::<String>(raw_key).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

/// The `params.arguments` of a JSON-RPC request body as it was written (`{}` when absent), or
/// `None` when the body cannot be read so (the caller then forwards the parsed value).
pub(super) fn arguments_of(body: &[u8]) -> Option<Sent<'_>> {
    let message = Sent::read(std::str::from_utf8(body).ok()?)?;
    let params = message.into_member("params").ok().flatten()?;
    match params.into_member("arguments") {
        Ok(Some(arguments @ Sent::Object(_))) => Some(arguments),
        Ok(None) => Some(Sent::Object(Vec::new())),
        Ok(Some(_)) | Err(()) => None,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::Value;

    use super::*;

    fn forwarded(body: &str) -> String {
        String::from_utf8(arguments_of(body.as_bytes()).unwrap().to_vec()).unwrap()
    }

    #[test]
    fn x11_numbers_keep_their_text_and_whitespace_goes() {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t",
            "arguments": { "a" : 1e2 , "b":[ 1.0 ,-0, 12345678901234567890123 ],
            "c": {"d": 1E-7, "e": "x \" y\u00e9"}, "f": true, "g": null } }}"#;
        assert_eq!(
            forwarded(body),
            r#"{"a":1e2,"b":[1.0,-0,12345678901234567890123],"c":{"d":1E-7,"e":"x \" y\u00e9"},"f":true,"g":null}"#
        );
    }

    #[test]
    fn x11_absent_arguments_are_an_empty_object_and_other_values_are_not_read() {
        let no_arguments =
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#;
        assert_eq!(forwarded(no_arguments), "{}");
        for body in [
            r#"{"params":{"arguments":[1]}}"#,
            r#"{"params":[]}"#,
            r#"{"id":1}"#,
            "[1]",
            "{",
            r#"{"params":{"arguments":{"a":1}}} x"#,
        ] {
            assert!(arguments_of(body.as_bytes()).is_none(), "{body}");
        }
    }

    #[test]
    fn x11_a_repeated_key_keeps_its_first_place_and_its_last_value_as_serde_json_does() {
        // The last `params` and `arguments` count, as in the parsed request.
        let body = r#"{"params":{"arguments":{"x":1}},"params":{"arguments":{"x":2},"arguments":
            {"a":1,"b":2.50,"\u0061":3e0}}}"#;
        assert_eq!(forwarded(body), r#"{"a":3e0,"b":2.50}"#);
        // Past the indexed size as well.
        let members: Vec<String> = (0..40).map(|i| format!(r#""k{}":{i}"#, i % 25)).collect();
        let text = format!("{{{}}}", members.join(","));
        let written = Sent::read(&text).unwrap().to_vec();
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(serde_json::from_slice::<Value>(&written).unwrap(), parsed);
        assert_eq!(
            String::from_utf8(written).unwrap(),
            serde_json::to_string(&parsed).unwrap()
        );
    }

    /// Any JSON value, written with whitespace anywhere a token boundary allows it.
    fn json_text() -> impl Strategy<Value = String> {
        let space = prop::sample::select(vec!["", " ", "\n\t", "\r\n  "]);
        let scalar = prop_oneof![
            Just("null".to_string()),
            Just("true".to_string()),
            Just("false".to_string()),
            any::<i64>().prop_map(|n| n.to_string()),
            prop::sample::select(vec![
                "1e2",
                "-0",
                "1.0",
                "0.5e-3",
                "12345678901234567890123",
                "-1E+2",
                "2.50"
            ])
            .prop_map(str::to_string),
            "[a-z가-힣\"\\\\/ ]{0,8}".prop_map(|s| serde_json::to_string(&s).unwrap()),
            Just(r#""\u0041\n\ud83d\ude00""#.to_string()),
        ];
        scalar.prop_recursive(6, 64, 6, move |inner| {
            let space = space.clone();
            prop_oneof![
                prop::collection::vec((inner.clone(), space.clone()), 0..6).prop_map(|items| {
                    let items: Vec<String> = items
                        .into_iter()
                        .map(|(v, s)| format!("{s}{v}{s}"))
                        .collect();
                    format!("[{}]", items.join(","))
                }),
                prop::collection::vec(("[a-c]{1,2}", inner, space), 0..6).prop_map(|members| {
                    let members: Vec<String> = members
                        .into_iter()
                        .map(|(k, v, s)| format!("{s}\"{k}\"{s}:{s}{v}{s}"))
                        .collect();
                    format!("{{{}}}", members.join(","))
                }),
            ]
        })
    }

    proptest! {
        /// What is forwarded means what was validated: the written text parses to the same value
        /// as the request's, and it is `serde_json`'s compact text but for the scalars' spelling.
        #[test]
        fn x11_the_written_text_is_the_parsed_value(text in json_text()) {
            let parsed: Value = serde_json::from_str(&text).unwrap();
            let written = Sent::read(&text).unwrap().to_vec();
            prop_assert_eq!(serde_json::from_slice::<Value>(&written).unwrap(), parsed.clone());
            let compact = serde_json::to_string(&parsed).unwrap();
            prop_assert_eq!(Sent::read(&compact).unwrap().to_vec(), compact.as_bytes());
        }
    }
}
