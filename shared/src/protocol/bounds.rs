//! How much JSON one request body may hold, counted before anything is built from it
//! (CONTRACT E6, O1; RFC 8259 §9 lets a parser limit a text's size, its numbers' precision and
//! its strings).
//!
//! Building a `serde_json::Value` costs about a hundred nanoseconds per object member (its name
//! allocated and hashed) and a million-digit number is read digit by digit, so a 1 MiB body
//! dense with structure costs milliseconds before any check can refuse it. One pass over the
//! bytes, strings skipped with `memchr`, counts what the body holds and stops at the first
//! limit it crosses; the body is parsed only when it fits.

use memchr::memchr2;

/// Most JSON items one request body may hold: every value (object, array, string, number,
/// `true`, `false`, `null`) and every object member's name counts one, a long number one per
/// [`NUMBER_CHARS_PER_ITEM`] characters, an integer beyond a double's precision
/// [`BIG_INTEGER_ITEMS`] and a long member name one per [`NAME_BYTES_PER_ITEM`] bytes
/// (CONTRACT E6).
pub const MAX_JSON_ITEMS: usize = 10_000;

/// Characters of a number that count one item (CONTRACT E6): a number of 9 to 16 characters
/// counts two. A number of more than 19 significant digits is read by a slow exact path
/// (about 100 to 250 ns at one core), so long numbers count by their length.
pub const NUMBER_CHARS_PER_ITEM: usize = 8;

/// Digits of the longest integer every one of which a double holds exactly (2^53 has 16).
pub const MAX_EXACT_INTEGER_DIGITS: usize = 15;

/// Items an integer of more than [`MAX_EXACT_INTEGER_DIGITS`] digits counts (CONTRACT E6): at
/// most 200 of them in a body. Up to 2,048 distinct integers beyond 2^53 round to the same
/// double, and JSON Schema's `uniqueItems` check hashes numbers by their double, so an array of
/// such integers costs comparisons quadratic in their count.
pub const BIG_INTEGER_ITEMS: usize = 50;

/// Bytes of a member name that count one item (CONTRACT E6): a name of 33 to 64 bytes counts
/// two. Each name is allocated and hashed into its object's map, about five times the cost of
/// a string value's byte, so long names count by their length.
pub const NAME_BYTES_PER_ITEM: usize = 32;

/// Longest JSON number a request body may hold, in characters (CONTRACT E6): longer than any
/// integer up to 2^128 or any double's shortest text.
pub const MAX_NUMBER_CHARS: usize = 64;

/// Which of E6's limits a body crosses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverBounds {
    /// More than [`MAX_JSON_ITEMS`] values and member names.
    TooManyItems,
    /// A number longer than [`MAX_NUMBER_CHARS`].
    NumberTooLong,
}

impl OverBounds {
    /// The `-32600` detail text (CONTRACT E6).
    #[must_use]
    pub fn detail(self) -> String {
        match self {
            Self::TooManyItems => {
                format!("message holds more than {MAX_JSON_ITEMS} JSON values and member names")
            }
            Self::NumberTooLong => {
                format!("message holds a number longer than {MAX_NUMBER_CHARS} characters")
            }
        }
    }
}

/// Checks that `body` holds at most [`MAX_JSON_ITEMS`] items and no number longer than
/// [`MAX_NUMBER_CHARS`], in one pass linear in its length that stops at the first limit
/// crossed.
///
/// Only counts: a body that is not JSON passes (or crosses a limit) here and is refused as E1
/// says by the parser after.
///
/// # Errors
/// The first limit the body crosses.
pub fn check(body: &[u8]) -> Result<(), OverBounds> {
    let mut items = 0usize;
    let mut i = 0;
    while i < body.len() {
        match body[i] {
            b'"' => {
                let start = i;
                i = string_end(body, i + 1);
                items += if is_member_name(body, i) {
                    (i - start - 2).max(1).div_ceil(NAME_BYTES_PER_ITEM)
                } else {
                    1
                };
            }
            b'{' | b'[' | b't' | b'f' | b'n' => {
                items += 1;
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < body.len()
                    && matches!(body[i], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                {
                    i += 1;
                }
                if i - start > MAX_NUMBER_CHARS {
                    return Err(OverBounds::NumberTooLong);
                }
                let number = &body[start..i];
                let digits = number.iter().filter(|b| b.is_ascii_digit()).count();
                let integer = !number.iter().any(|b| matches!(b, b'.' | b'e' | b'E'));
                items += if integer && digits > MAX_EXACT_INTEGER_DIGITS {
                    BIG_INTEGER_ITEMS
                } else {
                    number.len().div_ceil(NUMBER_CHARS_PER_ITEM)
                };
            }
            // `true`, `false` and `null` count once, at their first letter.
            b'a'..=b'z' | b'A'..=b'Z' => {
                while i < body.len() && body[i].is_ascii_alphabetic() {
                    i += 1;
                }
            }
            _ => i += 1,
        }
        if items > MAX_JSON_ITEMS {
            return Err(OverBounds::TooManyItems);
        }
    }
    Ok(())
}

/// Whether the string that ended at `end` is a member name: the next byte after any
/// whitespace is `:`.
fn is_member_name(body: &[u8], end: usize) -> bool {
    body.get(end..)
        .and_then(|rest| {
            rest.iter()
                .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        })
        .is_some_and(|&b| b == b':')
}

/// The index after the string whose text starts at `from` (after its opening quote): the
/// byte after the closing quote, or the body's end.
fn string_end(body: &[u8], mut from: usize) -> usize {
    while let Some(at) = memchr2(b'"', b'\\', &body[from..]) {
        let at = from + at;
        if body[at] == b'"' {
            return at + 1;
        }
        // An escape: skip the backslash and the character it escapes.
        from = at + 2;
        if from >= body.len() {
            return body.len();
        }
    }
    body.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(n: usize) -> String {
        format!("[{}]", vec!["1"; n - 1].join(","))
    }

    /// CONTRACT E6: the array and its elements count; one more crosses the limit.
    #[test]
    fn e6_items_are_counted_to_the_limit() {
        assert_eq!(check(items(MAX_JSON_ITEMS).as_bytes()), Ok(()));
        assert_eq!(
            check(items(MAX_JSON_ITEMS + 1).as_bytes()),
            Err(OverBounds::TooManyItems)
        );
    }

    /// CONTRACT E6: a member's name counts as well as its value; escaped quotes, brackets and
    /// letters inside strings count nothing.
    #[test]
    fn e6_member_names_count_and_string_contents_do_not() {
        let body = br#"{"a\"[{,": "x\\", "b": [true, false, null, -1.5e3], "c": {}}"#;
        // The object, 3 names, "x\\", the array and its 4 scalars, {}: 11 items.
        let one = String::from_utf8_lossy(body).into_owned();
        let copies = |n: usize| format!("[{}]", vec![one.as_str(); n].join(","));
        // 909 copies and the outer array: 10,000 items.
        assert_eq!(check(copies(MAX_JSON_ITEMS / 11).as_bytes()), Ok(()));
        assert_eq!(
            check(copies(MAX_JSON_ITEMS / 11 + 1).as_bytes()),
            Err(OverBounds::TooManyItems)
        );
    }

    /// CONTRACT E6: a number of 64 characters is read, one of 65 is refused.
    #[test]
    fn e6_numbers_up_to_64_characters() {
        let at = format!("[-{}e+1]", "9".repeat(MAX_NUMBER_CHARS - 4));
        assert_eq!(check(at.as_bytes()), Ok(()));
        let over = format!("[-{}e+10]", "9".repeat(MAX_NUMBER_CHARS - 4));
        assert_eq!(check(over.as_bytes()), Err(OverBounds::NumberTooLong));
        // Digits inside a string are text.
        let quoted = format!("[\"{}\"]", "9".repeat(10_000));
        assert_eq!(check(quoted.as_bytes()), Ok(()));
    }

    /// CONTRACT E6: a number counts one item per 8 characters, a member name one per 32
    /// bytes; a string value counts one whatever its length.
    #[test]
    fn e6_long_numbers_and_member_names_count_by_their_length() {
        // 9 characters count 2: the array and 4,999 such numbers are 9,999 items.
        let numbers = |n: usize| format!("[{}]", vec!["123456789"; n].join(","));
        assert_eq!(check(numbers(4_999).as_bytes()), Ok(()));
        assert_eq!(
            check(numbers(5_000).as_bytes()),
            Err(OverBounds::TooManyItems)
        );
        // A name of 33 bytes counts 2, its value 1: the object and 3,333 members are 10,000.
        let members = |n: usize| {
            let names: Vec<String> = (0..n).map(|i| format!("\"{i:0>33}\" : 1")).collect();
            format!("{{{}}}", names.join(","))
        };
        assert_eq!(check(members(3_333).as_bytes()), Ok(()));
        assert_eq!(
            check(members(3_334).as_bytes()),
            Err(OverBounds::TooManyItems)
        );
        // The same strings as values count one each.
        let values = |n: usize| {
            let texts: Vec<String> = (0..n).map(|i| format!("\"{i:0>33}\"")).collect();
            format!("[{}]", texts.join(","))
        };
        assert_eq!(check(values(9_999).as_bytes()), Ok(()));
        // An empty name and a name of 32 bytes count one.
        assert_eq!(check(br#"{"":1}"#), Ok(()));
    }

    /// CONTRACT E6: an integer of more than 15 digits counts 50 items, a fraction or an
    /// exponent of the same length counts by its length.
    #[test]
    fn e6_integers_beyond_a_doubles_precision_count_fifty() {
        let big = |n: usize, number: &str| format!("[{}]", vec![number; n].join(","));
        // The array and 199 integers of 19 digits: 1 + 199 * 50 = 9,951 items.
        assert_eq!(check(big(199, "9223372036854779904").as_bytes()), Ok(()));
        assert_eq!(
            check(big(200, "9223372036854779904").as_bytes()),
            Err(OverBounds::TooManyItems)
        );
        assert_eq!(check(big(200, "-922337203685477").as_bytes()), Ok(()));
        assert_eq!(
            check(big(3_000, "9223372036854779904.0").as_bytes()),
            Ok(())
        );
    }

    /// A body that ends inside a string or after a lone backslash is counted without reading
    /// past its end (the parser refuses it after, E1).
    #[test]
    fn e6_unterminated_text_ends_the_count() {
        for body in [
            &b"\"abc"[..],
            b"\"abc\\",
            b"[\"\\\"",
            b"\\",
            b"-",
            b"{\"a\":",
        ] {
            assert_eq!(check(body), Ok(()), "{body:?}");
        }
    }
}
