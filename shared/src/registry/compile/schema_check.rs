//! The cheap load check of a tool schema (CONTRACT R5): one streaming read of the schema's text
//! in the one pass over the manifest, no `serde_json::Value` built, which also finds where the
//! schema's text ends ([`Facts::text_end`]).
//!
//! The read proves a schema valid only when every keyword it meets is one it knows to be valid
//! with that value under JSON Schema 2020-12 (`type` with simple type names, `properties`,
//! `required`, bounds, `enum`, `items`, `allOf`, ...; [`super::schema_keywords`]), so that the
//! schema passes its meta-schema and compiles. What it cannot prove it never refuses: it notes
//! that the schema needs the compiler at load (`$schema`, `$id`, references other than
//! `#/$defs/<name>`, `patternProperties`, ...), or that the tool goes to the full check (a value
//! of the wrong type, a repeated key), whose messages are the manifest's problems.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::schema_keywords::{Ctx, SIMPLE_TYPES, keyword};
use crate::text::Key;

/// The annotation that mirrors an argument into `Mcp-Param-<Name>` (CONTRACT N6).
const X_MCP_HEADER: &str = "x-mcp-header";

/// What the read found in one schema.
#[derive(Debug, Default)]
pub(super) struct Facts<'de> {
    /// A value the read cannot prove valid: the tool goes to the full check.
    pub(super) unproven: bool,
    /// A keyword whose validity only the compiler decides: the schema is compiled at load.
    pub(super) needs_compile: bool,
    /// An `x-mcp-header` key somewhere (CONTRACT N6): the annotations are read from the parsed
    /// schema, as the full check reads them.
    pub(super) header_annotations: bool,
    /// The names of `#/$defs/<name>` references.
    pub(super) local_refs: Vec<Cow<'de, str>>,
    /// The names of the root's `$defs`.
    pub(super) root_defs: Vec<Cow<'de, str>>,
    /// Every `pattern`.
    pub(super) patterns: Vec<Cow<'de, str>>,
    /// The root's `properties` as a search reads them (CONTRACT S4).
    pub(super) properties: Properties<'de>,
    /// What of the root's `properties` the value being read is.
    searched: Searched,
    /// The keys (or `type`/`required` names) of the objects and arrays being read, as a stack
    /// of frames, for finding a repeated one.
    seen: Vec<Cow<'de, str>>,
    /// Where the frame of the `type` or `required` array being read starts in `seen`.
    list_frame: usize,
    /// The arrays and objects open around the value being read, counted from the document's
    /// root.
    depth: usize,
    /// The arrays and objects around the schema, counted from the document's root.
    around: usize,
    /// The last string (key or value) read as a slice of the manifest's text: the address of
    /// its closing quote (just past its last byte), and the arrays and objects open around it.
    last_string: Option<(usize, usize)>,
}

/// A schema's root `properties`, in order: each name and its schema's `description` (when a
/// string), as slices of the manifest's text, the texts a search reads (CONTRACT S4).
#[derive(Debug, Default)]
pub(super) struct Properties<'de> {
    /// Whether they are noted at all.
    wanted: bool,
    pub(super) noted: Vec<(&'de str, Option<&'de str>)>,
    /// One of them is escaped text (decoded, not a slice): the search reads the schema's JSON
    /// instead.
    pub(super) escaped: bool,
}

/// What of the root's `properties` ([`Facts::properties`]) the value being read is.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Searched {
    /// Nothing a search reads.
    #[default]
    Nothing,
    /// The root's `properties` object.
    Properties,
    /// A property's schema.
    Property,
    /// A property's `description`.
    Description,
}

/// The most arrays and objects serde_json nests (its recursion limit, 128, counts down and
/// refuses the container that reaches 0).
pub(super) const MAX_DEPTH: usize = 127;

impl<'de> Facts<'de> {
    /// Reads a schema (a JSON value inside `around` arrays and objects of the manifest) from
    /// the manifest's parse, and what it holds; with its root properties' texts when
    /// `searched` (CONTRACT S4).
    ///
    /// # Errors
    /// The parse's error: text a `Value` parse of the manifest refuses (the checker itself
    /// fails only past serde_json's nesting limit, which the parse enforces too).
    pub(super) fn read<D: Deserializer<'de>>(
        deserializer: D,
        around: usize,
        searched: bool,
    ) -> Result<Self, D::Error> {
        let mut facts = Facts {
            depth: around,
            around,
            properties: Properties {
                wanted: searched,
                ..Properties::default()
            },
            ..Facts::default()
        };
        Check {
            ctx: Ctx::Schema { root: true },
            facts: &mut facts,
        }
        .deserialize(deserializer)?;
        Ok(facts)
    }

    /// Where the schema's text ends in `text`, the manifest's text the parse read (the index
    /// just past its closing bracket), given where it starts (`start`). The read keeps where
    /// the last string it met as a slice of `text` ends and how many arrays and objects were
    /// open around it, so that only the text after that string is scanned here: what remains
    /// is numbers, literals, punctuation and strings with escapes, which the parse has just
    /// found to be JSON. `None` when the schema is not an array or object at `start`.
    pub(super) fn text_end(&self, text: &str, start: usize) -> Option<usize> {
        let bytes = text.as_bytes();
        if !matches!(bytes.get(start), Some(b'{' | b'[')) {
            return None;
        }
        let base = bytes.as_ptr() as usize;
        let (from, open) = match self.last_string {
            // A string inside the schema: at least the schema itself is open around it.
            Some((end, depth)) if end > base && depth > self.around => {
                (end - base + 1, depth - self.around)
            }
            _ => (start, 0),
        };
        close_of(bytes, from.max(start), open)
    }

    /// Notes a string read as a slice of the manifest's text.
    #[expect(
        clippy::ptr_arg,
        reason = "whether the string is borrowed is what it reads"
    )]
    fn saw(&mut self, string: &Cow<'de, str>) {
        if let Cow::Borrowed(string) = string {
            self.last_string = Some((string.as_ptr() as usize + string.len(), self.depth));
        }
    }

    /// Opens an array or object: `false` past [`MAX_DEPTH`].
    fn enter(&mut self) -> bool {
        self.depth += 1;
        self.depth <= MAX_DEPTH
    }

    /// Whether `name` repeats one of the frame starting at `frame`; records it.
    fn repeats(&mut self, frame: usize, name: Cow<'de, str>) -> bool {
        let repeated = self.seen[frame..].contains(&name);
        self.seen.push(name);
        repeated
    }
}

/// Reads one value as `ctx` says, into the facts. Also its own visitor.
struct Check<'f, 'de> {
    ctx: Ctx,
    facts: &'f mut Facts<'de>,
}

impl<'de> DeserializeSeed<'de> for Check<'_, 'de> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Check<'_, 'de> {
    fn number(self, positive: bool, integer: bool) {
        match self.ctx {
            Ctx::Number | Ctx::Any => {}
            Ctx::PositiveNumber if positive => {}
            Ctx::Count if integer => {}
            _ => self.facts.unproven = true,
        }
    }

    fn string(self, value: Cow<'de, str>) {
        let facts = self.facts;
        facts.saw(&value);
        if facts.searched == Searched::Description {
            match (&value, facts.properties.noted.last_mut()) {
                (Cow::Borrowed(text), Some(property)) => property.1 = Some(text),
                _ => facts.properties.escaped = true,
            }
        }
        match self.ctx {
            Ctx::Any | Ctx::Text => {}
            Ctx::Type if SIMPLE_TYPES.contains(&value.as_ref()) => {}
            Ctx::RootType if value == "object" => {}
            // Repeats are looked for in the array's frame, which `visit_seq` opened.
            Ctx::TypeName if SIMPLE_TYPES.contains(&value.as_ref()) => {
                facts.unproven |= facts.repeats(facts.list_frame, value);
            }
            Ctx::RequiredName => {
                facts.unproven |= facts.repeats(facts.list_frame, value);
            }
            Ctx::Ref => match local_def(&value) {
                Some(name) => facts.local_refs.push(name),
                None => facts.needs_compile = true,
            },
            Ctx::Pattern => facts.patterns.push(value),
            _ => facts.unproven = true,
        }
    }
}

/// The index just past the bracket that closes the `open` arrays and objects around index
/// `from` of `bytes` (JSON text, read by the parse; `open` 0: the array or object that starts at
/// `from`). `None` when the text ends first.
fn close_of(bytes: &[u8], mut from: usize, mut open: usize) -> Option<usize> {
    while let Some(&byte) = bytes.get(from) {
        match byte {
            b'"' => {
                from += 1;
                while let Some(&byte) = bytes.get(from) {
                    match byte {
                        b'\\' => from += 2,
                        b'"' => break,
                        _ => from += 1,
                    }
                }
            }
            b'{' | b'[' => open += 1,
            b'}' | b']' => {
                open = open.checked_sub(1)?;
                if open == 0 {
                    return Some(from + 1);
                }
            }
            _ => {}
        }
        from += 1;
    }
    None
}

/// `#/$defs/<name>` with a name that needs no JSON Pointer or percent decoding: the name.
fn local_def<'de>(reference: &Cow<'de, str>) -> Option<Cow<'de, str>> {
    let name = reference.strip_prefix("#/$defs/")?;
    let plain = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    plain.then(|| Cow::Owned(name.to_owned()))
}

impl<'de> Visitor<'de> for Check<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        match self.ctx {
            Ctx::Bool | Ctx::Any | Ctx::Schema { root: false } => {}
            _ => self.facts.unproven = true,
        }
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        self.number(v > 0, v >= 0);
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        self.number(v > 0, true);
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        // A `Count` written with a fraction (`2.0`) is left to the full check.
        self.number(v > 0.0, false);
        Ok(())
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        self.string(Cow::Owned(v.to_owned()));
        Ok(())
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<(), E> {
        self.string(Cow::Borrowed(v));
        Ok(())
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        if self.ctx != Ctx::Any {
            self.facts.unproven = true;
        }
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let facts = self.facts;
        facts.searched = Searched::Nothing;
        let element = match self.ctx {
            Ctx::SchemaList => Ctx::Schema { root: false },
            Ctx::Type => Ctx::TypeName,
            Ctx::Required => Ctx::RequiredName,
            Ctx::DataList { .. } | Ctx::Any => Ctx::Any,
            _ => {
                facts.unproven = true;
                Ctx::Any
            }
        };
        if !facts.enter() {
            return Err(de::Error::custom("nested too deep"));
        }
        let marker = facts.seen.len();
        let outer_frame = std::mem::replace(&mut facts.list_frame, marker);
        let mut count = 0usize;
        while seq
            .next_element_seed(Check {
                ctx: element,
                facts: &mut *facts,
            })?
            .is_some()
        {
            count += 1;
        }
        facts.seen.truncate(marker);
        facts.list_frame = outer_frame;
        facts.depth -= 1;
        let must_have_one = matches!(
            self.ctx,
            Ctx::SchemaList | Ctx::Type | Ctx::DataList { non_empty: true }
        );
        facts.unproven |= must_have_one && count == 0;
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let facts = self.facts;
        let root = self.ctx == Ctx::Schema { root: true };
        match self.ctx {
            Ctx::Schema { .. } | Ctx::SchemaMap { .. } | Ctx::Any => {}
            _ => facts.unproven = true,
        }
        if !facts.enter() {
            return Err(de::Error::custom("nested too deep"));
        }
        let frame = facts.seen.len();
        // What a search reads (CONTRACT S4): the root's `properties`, each property's schema
        // and its `description`, one level each.
        let searched = std::mem::take(&mut facts.searched);
        while let Some(Key(key)) = map.next_key()? {
            facts.saw(&key);
            if key == X_MCP_HEADER {
                facts.header_annotations = true;
            }
            facts.searched = match searched {
                _ if !facts.properties.wanted => Searched::Nothing,
                Searched::Nothing if root && key == "properties" => {
                    facts.properties.noted.clear();
                    facts.properties.noted.reserve(8);
                    Searched::Properties
                }
                Searched::Properties => {
                    match &key {
                        Cow::Borrowed(name) => facts.properties.noted.push((name, None)),
                        Cow::Owned(_) => facts.properties.escaped = true,
                    }
                    Searched::Property
                }
                Searched::Property if key == "description" => Searched::Description,
                _ => Searched::Nothing,
            };
            let value = match self.ctx {
                Ctx::Schema { .. } => keyword_value(&key, root, facts),
                Ctx::SchemaMap { root_defs } => {
                    if root_defs {
                        facts.root_defs.push(key.clone());
                    }
                    Ctx::Schema { root: false }
                }
                _ => Ctx::Any,
            };
            // A repeated key: `Value` would keep the last one; the full check reads it so.
            facts.unproven |= facts.repeats(frame, key);
            map.next_value_seed(Check {
                ctx: value,
                facts: &mut *facts,
            })?;
        }
        facts.searched = Searched::Nothing;
        facts.seen.truncate(frame);
        facts.depth -= 1;
        Ok(())
    }
}

/// What the value of a schema's keyword must be; notes in `facts` a keyword only the compiler
/// can judge.
fn keyword_value(key: &str, root: bool, facts: &mut Facts<'_>) -> Ctx {
    let ctx = keyword(key, root);
    if ctx == Ctx::Compiled {
        facts.needs_compile = true;
        return Ctx::Any;
    }
    ctx
}
