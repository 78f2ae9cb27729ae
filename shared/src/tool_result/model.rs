//! The `tools/call` result the gateway answers with (CONTRACT X5, X6): one text block or the
//! content blocks of an MCP-native Tool Service, optional `structuredContent`, `isError`, and
//! `_meta.searchTime` on the first block.

use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The content of a `tools/call` result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// One text block (CONTRACT X5, X6).
    Text(String),
    /// MCP content blocks as an MCP-native Tool Service sent them.
    Blocks(Vec<Map<String, Value>>),
}

/// A `tools/call` result:
/// `{"content":[…],"structuredContent":{…}?,"isError":…}` where the first content block
/// carries `_meta.searchTime` (whole ms of the Tool Service call).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallResult {
    /// The content blocks.
    pub content: Content,
    /// `structuredContent` as compact JSON text of an object, when the result has one.
    pub structured_content: Option<String>,
    /// `isError`: `false` for a usable answer, `true` for every execution failure.
    pub is_error: bool,
    /// Whole milliseconds the Tool Service call took: `_meta.searchTime` here, `tool_ms` in the
    /// usage event (the same span, CONTRACT X5, U1).
    pub tool_ms: u64,
}

impl CallResult {
    /// A result with one text block and no `structuredContent`.
    #[must_use]
    pub fn text(text: impl Into<String>, is_error: bool, tool_ms: u64) -> Self {
        Self {
            content: Content::Text(text.into()),
            structured_content: None,
            is_error,
            tool_ms,
        }
    }

    /// The text of the first block when it is a text block.
    #[must_use]
    pub fn first_text(&self) -> Option<&str> {
        match &self.content {
            Content::Text(text) => Some(text),
            Content::Blocks(blocks) => blocks.first()?.get("text")?.as_str(),
        }
    }
}

#[derive(Serialize)]
struct SearchTime {
    #[serde(rename = "searchTime")]
    search_time: u64,
}

/// A block's existing `_meta` object with `searchTime` set (the gateway's measure wins).
struct MetaWithSearchTime<'a>(&'a Map<String, Value>, u64);

impl Serialize for MetaWithSearchTime<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.0.iter().filter(|(key, _)| *key != "searchTime") {
            map.serialize_entry(key, value)?;
        }
        map.serialize_entry("searchTime", &self.1)?;
        map.end()
    }
}

/// The first MCP-native block with `_meta.searchTime` added, every other field as sent.
struct FirstBlock<'a>(&'a Map<String, Value>, u64);

impl Serialize for FirstBlock<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        let mut has_meta = false;
        for (key, value) in self.0 {
            match value {
                Value::Object(meta) if key == "_meta" => {
                    has_meta = true;
                    map.serialize_entry(key, &MetaWithSearchTime(meta, self.1))?;
                }
                _ => map.serialize_entry(key, value)?,
            }
        }
        if !has_meta {
            map.serialize_entry(
                "_meta",
                &SearchTime {
                    search_time: self.1,
                },
            )?;
        }
        map.end()
    }
}

struct Blocks<'a>(&'a Content, u64);

impl Serialize for Blocks<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct TextBlock<'a> {
            #[serde(rename = "type")]
            kind: &'static str,
            text: &'a str,
            #[serde(rename = "_meta")]
            meta: SearchTime,
        }
        match self.0 {
            Content::Text(text) => [TextBlock {
                kind: "text",
                text,
                meta: SearchTime {
                    search_time: self.1,
                },
            }]
            .serialize(serializer),
            Content::Blocks(blocks) => {
                let mut seq = serializer.serialize_seq(Some(blocks.len()))?;
                for (i, block) in blocks.iter().enumerate() {
                    if i == 0 {
                        seq.serialize_element(&FirstBlock(block, self.1))?;
                    } else {
                        seq.serialize_element(block)?;
                    }
                }
                seq.end()
            }
        }
    }
}

impl Serialize for CallResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("content", &Blocks(&self.content, self.tool_ms))?;
        if let Some(structured) = &self.structured_content {
            let raw: &RawValue =
                serde_json::from_str(structured).map_err(serde::ser::Error::custom)?;
            map.serialize_entry("structuredContent", raw)?;
        }
        map.serialize_entry("isError", &self.is_error)?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn x5_result_shape() {
        let r = CallResult::text("t", false, 12);
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"content":[{"type":"text","text":"t","_meta":{"searchTime":12}}],"isError":false}"#
        );
    }

    #[test]
    fn search_time_joins_the_first_blocks_own_meta_and_later_blocks_stay_as_sent() {
        let block = |value: Value| match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        };
        let r = CallResult {
            content: Content::Blocks(vec![
                block(json!({"type": "text", "text": "a", "_meta": {"k": 1, "searchTime": 9}})),
                block(json!({"type": "text", "text": "b", "_meta": {"k": 2}})),
            ]),
            structured_content: Some(r#"{"n":1.50}"#.into()),
            is_error: false,
            tool_ms: 3,
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"content":[{"type":"text","text":"a","_meta":{"k":1,"searchTime":3}},{"type":"text","text":"b","_meta":{"k":2}}],"structuredContent":{"n":1.50},"isError":false}"#
        );
        let r = CallResult {
            content: Content::Blocks(vec![block(json!({"type": "text", "text": "a"}))]),
            ..r
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"content":[{"type":"text","text":"a","_meta":{"searchTime":3}}],"structuredContent":{"n":1.50},"isError":false}"#
        );
    }
}
