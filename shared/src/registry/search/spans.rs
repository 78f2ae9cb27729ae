//! Where a tool's searched texts are in its `tools/list` entry (CONTRACT S4), noted by the
//! load's one pass over the manifest, so that the first search of an instance reads the texts
//! where they lie instead of reading every entry's JSON again.

use super::index::Text;

/// A text's place in a piece of an entry: its start and end, in bytes.
pub(crate) type Span = (u32, u32);

/// A searched field of a tool (CONTRACT S4), each with its own weight in the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    /// The tool's `name`.
    Name,
    /// Its `title`.
    Title,
    /// Its `description`.
    Description,
    /// The name of one of its `inputSchema`'s root `properties`.
    PropertyName,
    /// That property's schema's `description`.
    PropertyDescription,
}

/// The places of a tool's searched texts: its name, title and description in the entry's
/// head (`{"name":…,"title":…,"description":…,"inputSchema":`), then each root property's name
/// and description in the input schema's text. An absent text has the empty span `[0, 0]`
/// (as an empty text, it has no terms).
///
/// Each place is two `u16`s, 4 bytes (a route keeps one per searched text of every tool for
/// its life: 10,000 tools hold about 0.5 MB of them instead of 1.1 MB as `u32` pairs). A tool
/// whose head or input schema is longer than 65,535 bytes has none noted: the first search
/// reads its texts from its entry's JSON, as it does an escaped text's.
#[derive(Debug)]
pub(crate) struct FieldSpans(Box<[[u16; 2]]>);

/// The bytes at `[start, end]` of `piece`, when they are in it: the index checks a text as
/// UTF-8 once however often it repeats (checking each of 140,000 texts here was about a fifth of
/// the first search's index build for 10,000 tools).
fn text(piece: &[u8], [start, end]: [u16; 2]) -> Option<&[u8]> {
    piece.get(usize::from(start)..usize::from(end))
}

/// `span` as two `u16`s, when both fit.
fn short((start, end): Span) -> Option<[u16; 2]> {
    Some([u16::try_from(start).ok()?, u16::try_from(end).ok()?])
}

/// The span of `part`, a slice of `whole`.
fn span_in(whole: &str, part: &str) -> Option<Span> {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    whole.get(start..end)?;
    Some((u32::try_from(start).ok()?, u32::try_from(end).ok()?))
}

impl FieldSpans {
    /// The places of a tool's texts: `head` its entry's head, with the spans of its name,
    /// title and description there (`head_fields`, `None` when absent); `schema` its input
    /// schema's text and `properties` its root properties' names and descriptions, as slices
    /// of it. `None` when a property's text is not a slice of `schema`, or a place is past
    /// byte 65,535 of its piece.
    pub(crate) fn new(
        head_fields: [Option<Span>; 3],
        schema: &str,
        properties: &[(&str, Option<&str>)],
    ) -> Option<Self> {
        let mut spans = Vec::with_capacity(3 + 2 * properties.len());
        for field in head_fields {
            spans.push(short(field.unwrap_or_default())?);
        }
        for &(name, description) in properties {
            spans.push(short(span_in(schema, name)?)?);
            spans.push(match description {
                Some(text) => short(span_in(schema, text)?)?,
                None => [0, 0],
            });
        }
        Some(Self(spans.into_boxed_slice()))
    }

    /// Gives each text that is not empty to `out`, in the entry's order, read from the
    /// entry's `head` and input `schema` texts (a span outside them is passed over; one not on
    /// character boundaries is not UTF-8, and the index finds no terms in it).
    pub(crate) fn each<'a>(
        &self,
        head: &'a [u8],
        schema: &'a [u8],
        out: &mut dyn FnMut(Field, Text<'a, '_>),
    ) {
        let heads = [Field::Name, Field::Title, Field::Description];
        for (field, span) in heads.into_iter().zip(&self.0) {
            if let Some(text) = text(head, *span).filter(|text| !text.is_empty()) {
                out(field, Text::Kept(text));
            }
        }
        for pair in self.0.get(3..).unwrap_or_default().chunks_exact(2) {
            let fields = [Field::PropertyName, Field::PropertyDescription];
            for (field, span) in fields.into_iter().zip(pair) {
                if let Some(text) = text(schema, *span).filter(|text| !text.is_empty()) {
                    out(field, Text::Kept(text));
                }
            }
        }
    }
}
