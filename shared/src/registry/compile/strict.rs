//! JSON values of the one pass over a manifest's text read as strictly as a
//! `serde_json::Value` parse reads them, without building a `Value`: any value read and dropped
//! ([`Strict`]), and a field that must be a string ([`Text`]).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};

/// Any JSON value read and dropped as strictly as a `Value` parse reads it: escapes and
/// surrogates, number ranges and the nesting limit (serde_json's `IgnoredAny` skips without
/// those checks).
pub(super) struct Strict;

impl Strict {
    /// Reads the rest of an array strictly.
    pub(super) fn drain_seq<'de, A: de::SeqAccess<'de>>(mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<Strict>()?.is_some() {}
        Ok(())
    }

    /// Reads the rest of an object strictly.
    pub(super) fn drain_map<'de, A: MapAccess<'de>>(mut map: A) -> Result<(), A::Error> {
        while map.next_entry::<Strict, Strict>()?.is_some() {}
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct StrictVisitor;
        impl<'de> Visitor<'de> for StrictVisitor {
            type Value = Strict;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Strict, A::Error> {
                Strict::drain_seq(seq).map(|()| Strict)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Strict, A::Error> {
                Strict::drain_map(map).map(|()| Strict)
            }
            scalars_are!(Strict);
        }
        deserializer.deserialize_any(StrictVisitor)
    }
}

/// A field that must be a string: the string, or `Other` for any other JSON value (read).
pub(super) enum Text<'de> {
    Str(Cow<'de, str>),
    Other,
}

impl Text<'_> {
    pub(super) fn as_str(&self) -> Option<&str> {
        match self {
            Self::Str(text) => Some(text),
            Self::Other => None,
        }
    }
}

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text::Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text::Str(Cow::Owned(v.to_owned())))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, seq: A) -> Result<Text<'de>, A::Error> {
                Strict::drain_seq(seq).map(|()| Text::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Text<'de>, A::Error> {
                Strict::drain_map(map).map(|()| Text::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_unit<E>(self) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
        }
        deserializer.deserialize_any(TextVisitor)
    }
}
