//! The words a tool search compares (CONTRACT S4): a text's terms for English, Korean and text
//! that mixes them.
//!
//! - A run of letters and digits of a spaced script (Latin and the like) is split at camelCase
//!   and letter/digit boundaries (`getPetById` → `get`, `pet`, `by`, `id`; `HTTPServer2` →
//!   `http`, `server`, `2`), lower-cased, with a plural `s` taken off a word of four letters or
//!   more (`documents` → `document`, not `class`); a run that splits also gives its whole
//!   lower-cased text (`getpetbyid`). A few English function words are dropped.
//! - A run of Hangul (or of another script written without spaces: Han, kana) gives its
//!   overlapping two-character pieces (`연차휴가를` → `연차`, `차휴`, `휴가`, `가를`), so a word
//!   is found inside a longer run whatever particle or neighbour is attached to it; a run of
//!   one character gives that character.
//! - Everything else (spaces, punctuation, `_`, `.`, `-`, `/`) separates terms.

/// Whether `word` (lower-cased) is one of the English function words that say nothing about
/// what a tool does.
fn is_stop_word(word: &str) -> bool {
    matches!(
        word,
        "a" | "an"
            | "and"
            | "are"
            | "as"
            | "at"
            | "be"
            | "by"
            | "can"
            | "do"
            | "for"
            | "from"
            | "i"
            | "in"
            | "is"
            | "it"
            | "me"
            | "my"
            | "of"
            | "on"
            | "or"
            | "please"
            | "that"
            | "the"
            | "this"
            | "to"
            | "want"
            | "what"
            | "which"
            | "with"
            | "you"
            | "your"
    )
}

/// How a character takes part in a term.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// A letter or digit of a script written with spaces.
    Spaced,
    /// A character of a script written without spaces between words.
    Unspaced,
    /// A separator.
    Other,
}

fn class(c: char) -> Class {
    if c.is_ascii() {
        return if c.is_ascii_alphanumeric() {
            Class::Spaced
        } else {
            Class::Other
        };
    }
    let code = u32::from(c);
    let unspaced = matches!(code,
        0x1100..=0x11FF | 0x3130..=0x318F | 0xA960..=0xA97F | 0xAC00..=0xD7AF | 0xD7B0..=0xD7FF
        | 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF);
    if unspaced {
        Class::Unspaced
    } else if c.is_alphanumeric() {
        Class::Spaced
    } else {
        Class::Other
    }
}

/// Buffers a tokenizer reuses from text to text, so that a term costs no allocation.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    word: String,
    chars: Vec<char>,
}

/// Appends the terms of `text` to `out`, in order (with repeats).
pub(crate) fn terms(text: &str, out: &mut Vec<String>) {
    each_term(text, &mut Scratch::default(), &mut |term| {
        out.push(term.to_string());
    });
}

/// Gives each term of `text` to `out`, in order (with repeats), borrowed from `text` or from
/// `scratch`. ASCII is classed byte by byte; other characters are decoded where they occur.
pub(crate) fn each_term(text: &str, scratch: &mut Scratch, out: &mut impl FnMut(&str)) {
    let bytes = text.as_bytes();
    if bytes.is_ascii() {
        // The common case: runs of letters and digits between separators, byte by byte.
        let mut at = 0;
        while at < bytes.len() {
            let start = at
                + bytes[at..]
                    .iter()
                    .take_while(|b| !b.is_ascii_alphanumeric())
                    .count();
            at = start
                + bytes[start..]
                    .iter()
                    .take_while(|b| b.is_ascii_alphanumeric())
                    .count();
            if start < at {
                ascii_terms(&text[start..at], scratch, out);
            }
        }
        return;
    }
    let mut start = 0;
    let mut run_class = Class::Other;
    let mut run_ascii = true;
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        let (next, width) = if byte.is_ascii() {
            let class = if byte.is_ascii_alphanumeric() {
                Class::Spaced
            } else {
                Class::Other
            };
            (class, 1)
        } else {
            let c = text[at..]
                .chars()
                .next()
                .unwrap_or(char::REPLACEMENT_CHARACTER);
            (class(c), c.len_utf8())
        };
        if next != run_class {
            run_terms(&text[start..at], run_class, run_ascii, scratch, out);
            start = at;
            run_class = next;
            run_ascii = true;
        }
        run_ascii &= width == 1;
        at += width;
    }
    run_terms(&text[start..], run_class, run_ascii, scratch, out);
}

fn run_terms(
    run: &str,
    class: Class,
    ascii: bool,
    scratch: &mut Scratch,
    out: &mut impl FnMut(&str),
) {
    match class {
        Class::Spaced if ascii => ascii_terms(run, scratch, out),
        Class::Spaced => spaced_terms(run, scratch, out),
        Class::Unspaced => unspaced_terms(run, out),
        Class::Other => {}
    }
}

/// The terms of a run of ASCII letters and digits: [`spaced_terms`] on bytes.
fn ascii_terms(run: &str, scratch: &mut Scratch, out: &mut impl FnMut(&str)) {
    let bytes = run.as_bytes();
    if bytes.iter().all(u8::is_ascii_lowercase) {
        // One lower-case word (most of a description): no parts, nothing to lower-case.
        push_word(run, out);
        return;
    }
    let mut start = 0;
    let mut parts = 0;
    for i in 1..=bytes.len() {
        let boundary = i == bytes.len() || {
            let (before, here) = (bytes[i - 1], bytes[i]);
            (before.is_ascii_lowercase() && here.is_ascii_uppercase())
                || (before.is_ascii_alphabetic() != here.is_ascii_alphabetic())
                || (before.is_ascii_uppercase()
                    && here.is_ascii_uppercase()
                    && bytes.get(i + 1).is_some_and(u8::is_ascii_lowercase))
        };
        if boundary {
            ascii_word(&run[start..i], scratch, out);
            parts += 1;
            start = i;
        }
    }
    if parts > 1 {
        ascii_word(run, scratch, out);
    }
}

/// An ASCII word as a term: borrowed when it is lower-case already, else lower-cased into
/// `scratch`.
fn ascii_word(word: &str, scratch: &mut Scratch, out: &mut impl FnMut(&str)) {
    if word.bytes().any(|b| b.is_ascii_uppercase()) {
        scratch.word.clear();
        scratch.word.push_str(word);
        scratch.word.make_ascii_lowercase();
        push_word(&scratch.word, out);
    } else {
        push_word(word, out);
    }
}

/// The terms of a run of a spaced script: its camelCase and letter/digit parts, and the whole.
fn spaced_terms(run: &str, scratch: &mut Scratch, out: &mut impl FnMut(&str)) {
    let mut chars = std::mem::take(&mut scratch.chars);
    chars.clear();
    chars.extend(run.chars());
    let mut start = 0;
    let mut parts = 0;
    for i in 1..=chars.len() {
        let boundary = i == chars.len() || {
            let (before, here) = (chars[i - 1], chars[i]);
            let after = chars.get(i + 1).copied();
            (before.is_lowercase() && here.is_uppercase())
                || (before.is_alphabetic() != here.is_alphabetic())
                // HTTPServer: the last capital of a run of capitals starts the next word.
                || (before.is_uppercase()
                    && here.is_uppercase()
                    && after.is_some_and(char::is_lowercase))
        };
        if boundary {
            let part: String = chars[start..i].iter().collect();
            push_word(&part.to_lowercase(), out);
            parts += 1;
            start = i;
        }
    }
    if parts > 1 {
        push_word(&run.to_lowercase(), out);
    }
    scratch.chars = chars;
}

/// A lower-cased word as a term: without a plural `s`, unless it is a function word.
fn push_word(word: &str, out: &mut impl FnMut(&str)) {
    // The longest function word has six letters.
    if word.len() <= 6 && is_stop_word(word) {
        return;
    }
    let stem = match word.strip_suffix('s') {
        Some(stem) if word.len() >= 4 && word.chars().count() >= 4 && !stem.ends_with('s') => stem,
        _ => word,
    };
    out(stem);
}

/// The terms of a run of an unspaced script: its overlapping pairs of characters, or the run
/// itself when it is one character.
fn unspaced_terms(run: &str, out: &mut impl FnMut(&str)) {
    let mut ends = run
        .char_indices()
        .map(|(i, _)| i)
        .skip(1)
        .chain(std::iter::once(run.len()));
    let Some(mut pair_start_next) = ends.next() else {
        return;
    };
    let mut pair_start = 0;
    let mut pairs = 0;
    for end in ends {
        out(&run[pair_start..end]);
        pairs += 1;
        pair_start = pair_start_next;
        pair_start_next = end;
    }
    if pairs == 0 {
        out(run);
    }
}

#[cfg(test)]
mod tests {
    use super::terms;

    fn of(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        terms(text, &mut out);
        out
    }

    #[test]
    fn s4_names_split_at_separators_camel_case_and_digits() {
        assert_eq!(of("search_documents"), ["search", "document"]);
        assert_eq!(of("getPetById"), ["get", "pet", "id", "getpetbyid"]);
        assert_eq!(of("HTTPServer2"), ["http", "server", "2", "httpserver2"]);
        assert_eq!(
            of("hr.leave-balance/v2"),
            ["hr", "leave", "balance", "v", "2", "v2"]
        );
        assert_eq!(of("class glass news"), ["class", "glass", "new"]);
        assert_eq!(of("What is the weather in Paris?"), ["weather", "pari"]);
    }

    #[test]
    fn s4_korean_is_taken_in_overlapping_pairs_whatever_the_spacing() {
        assert_eq!(of("연차휴가를"), ["연차", "차휴", "휴가", "가를"]);
        assert_eq!(of("휴가 잔여"), ["휴가", "잔여"]);
        assert_eq!(of("연"), ["연"]);
        // Mixed text: each script's run by its own rule.
        assert_eq!(of("VPN연결 오류"), ["vpn", "연결", "오류"]);
        assert_eq!(of("Jira티켓을 생성"), ["jira", "티켓", "켓을", "생성"]);
    }

    /// Letters outside ASCII take the same camelCase and plural rules, by `char`.
    #[test]
    fn s4_other_spaced_scripts_split_like_ascii() {
        assert_eq!(
            of("ÉcoleNormale Straßen ÜBERSicht"),
            [
                "école",
                "normale",
                "écolenormale",
                "straßen",
                "über",
                "sicht",
                "übersicht"
            ]
        );
        assert_eq!(of("Öls"), ["öls"]);
        assert_eq!(of("näs2b"), ["näs", "2", "b", "näs2b"]);
        assert_eq!(of(""), Vec::<String>::new());
        assert_eq!(of(" - "), Vec::<String>::new());
    }
}
