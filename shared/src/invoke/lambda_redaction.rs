//! Hiding what names a Lambda function tool's function in the texts the gateway writes
//! (CONTRACT X10): its ARNs, its name as a whole word, its account and its region.

use std::ops::Range;

use crate::registry::FunctionArn;

/// Where an ARN in a text ends: at white space, a quote or a bracket; a final `.` is the
/// sentence's.
fn arn_end(tail: &str) -> usize {
    let end = tail
        .find(|c: char| c.is_whitespace() || "\"'`,;()<>[]{}".contains(c))
        .unwrap_or(tail.len());
    tail[..end].trim_end_matches('.').len()
}

/// The byte offset of the first occurrence of the ASCII `needle` in `text` at or after `from`,
/// in any letter case. It reads `text` only up to the match, so that hiding many matches one
/// after the other stays linear in the text's length.
fn find_ignoring_case(text: &str, needle: &str, from: usize) -> Option<usize> {
    let needle = needle.as_bytes();
    if needle.is_empty() {
        return None;
    }
    text.as_bytes()
        .get(from..)?
        .windows(needle.len())
        .position(|window| window.eq_ignore_ascii_case(needle))
        .map(|at| from + at)
}

/// The byte range of the next ARN in `text`: `arn:` or its percent-encoded `arn%3a`, in any
/// letter case, to [`arn_end`].
fn next_arn(text: &str) -> Option<Range<usize>> {
    let mut from = 0;
    loop {
        let start = find_ignoring_case(text, "arn", from)?;
        let after = &text.as_bytes()[start + 3..];
        if after.starts_with(b":")
            || after
                .get(..3)
                .is_some_and(|next| next.eq_ignore_ascii_case(b"%3a"))
        {
            return Some(start..start + arn_end(&text[start..]));
        }
        from = start + 1;
    }
}

/// The shortest function name looked for on its own in a message (CONTRACT X10): as whole
/// words, shorter names are ordinary words or numbers (`a`, `go`, `42`), which hiding would
/// garble the message with.
pub(super) const MIN_BARE_NAME_CHARS: usize = 3;

/// Whether `byte` can be part of a function name or qualifier: `A-Za-z0-9`, `-`, `_`.
fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_')
}

/// The byte range of the next whole-word occurrence of the function's `name` in `text`, in any
/// letter case, with a `:` and a qualifier after it (`$LATEST`, a version or an alias) taken
/// with it: not preceded or followed by a name byte, so `hr-tools` is found in `hr-tools:live
/// failed` and `/aws/lambda/hr-tools`, not in `hr-tools-v2` (CONTRACT X10). `None` for a name
/// shorter than [`MIN_BARE_NAME_CHARS`].
fn next_name(text: &str, name: &str) -> Option<Range<usize>> {
    if name.len() < MIN_BARE_NAME_CHARS {
        return None;
    }
    let bytes = text.as_bytes();
    let mut from = 0;
    loop {
        let start = find_ignoring_case(text, name, from)?;
        from = start + 1;
        if start > 0 && is_name_byte(bytes[start - 1]) {
            continue;
        }
        let mut end = start + name.len();
        if bytes.get(end) == Some(&b':') {
            let qualifier = &bytes[end + 1..];
            let length = if qualifier
                .get(..7)
                .is_some_and(|q| q.eq_ignore_ascii_case(b"$LATEST"))
            {
                7
            } else {
                qualifier.iter().take_while(|b| is_name_byte(**b)).count()
            };
            if length > 0 {
                end += 1 + length;
            }
        }
        if !bytes.get(end).copied().is_some_and(is_name_byte) {
            return Some(start..end);
        }
    }
}

/// A message being redacted: its text so far, and the placeholders already put in, which later
/// steps leave alone (a function named `region` must not turn `<region>` into `<<function>>`).
enum Piece {
    Text(String),
    Hidden(&'static str),
}

/// `pieces` with every range `find` finds in their texts replaced by `placeholder`.
fn hide(
    pieces: Vec<Piece>,
    placeholder: &'static str,
    find: impl Fn(&str) -> Option<Range<usize>>,
) -> Vec<Piece> {
    let mut out = Vec::with_capacity(pieces.len());
    for piece in pieces {
        let Piece::Text(text) = piece else {
            out.push(piece);
            continue;
        };
        let mut rest = text.as_str();
        while let Some(found) = find(rest).filter(|found| !found.is_empty()) {
            if found.start > 0 {
                out.push(Piece::Text(rest[..found.start].to_string()));
            }
            out.push(Piece::Hidden(placeholder));
            rest = &rest[found.end..];
        }
        if !rest.is_empty() {
            out.push(Piece::Text(rest.to_string()));
        }
    }
    out
}

/// A function's error message with every ARN (`arn:` or `arn%3a` in any letter case, to the
/// next white space, quote or bracket) and the function's name as a whole word (any letter
/// case, with its `:qualifier`; [`next_name`]) replaced by `<function>`, its account (also
/// written `1234-5678-9012` or `1234 5678 9012`) by `<account>` and its region (any letter
/// case) by `<region>` (CONTRACT X10).
pub(super) fn redacted(message: &str, function: &FunctionArn) -> String {
    let mut pieces = vec![Piece::Text(message.to_string())];
    pieces = hide(pieces, "<function>", next_arn);
    pieces = hide(pieces, "<function>", |text| next_name(text, &function.name));
    let account = &function.account;
    let grouped = |separator: &str| [&account[..4], &account[4..8], &account[8..]].join(separator);
    for form in [account.clone(), grouped("-"), grouped(" ")] {
        pieces = hide(pieces, "<account>", |text| {
            text.find(form.as_str()).map(|at| at..at + form.len())
        });
    }
    pieces = hide(pieces, "<region>", |text| {
        find_ignoring_case(text, &function.region, 0).map(|at| at..at + function.region.len())
    });
    pieces
        .iter()
        .map(|piece| match piece {
            Piece::Text(text) => text.as_str(),
            Piece::Hidden(placeholder) => placeholder,
        })
        .collect()
}
