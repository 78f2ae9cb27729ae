//! The load's check of a schema's `pattern`s (CONTRACT R5): whether each compiles is the
//! compiler's answer under 2020-12, however [`CheckedPatterns::compiles`] gets to it.

use proptest::prelude::*;
use serde_json::json;

use super::tool_stream::CheckedPatterns;

/// The compiler's own answer under 2020-12, the draft of a schema that names none.
fn compiles_under_2020_12(pattern: &str) -> bool {
    jsonschema::validator_for(&json!({ "pattern": pattern })).is_ok()
}

fn compiles_under_draft_4(pattern: &str) -> bool {
    jsonschema::validator_for(&json!({
        "$schema": "http://json-schema.org/draft-04/schema#",
        "pattern": pattern
    }))
    .is_ok()
}

/// Patterns of every kind: plain, Unicode classes, look-around, back-references, flags and
/// escapes that ECMA-262 does not have, unbalanced brackets, and Korean text.
const PATTERNS: [&str; 40] = [
    "",
    "^a$",
    "^[A-Z]{2}-[0-9]{4,8}$",
    "^\\+?[0-9]{7,15}$",
    "^(INV|PO|SO)-[0-9]{6}$",
    "^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}$",
    "[",
    "(",
    ")",
    "\\",
    "a{2,1}",
    "\\p{L}+",
    "\\p{Letter}",
    "\\P{Lu}",
    "(?<=a)b",
    "(?<!a)b",
    "a(?=b)",
    "(?<name>x)\\k<name>",
    "(a)\\1",
    "\\d\\w\\s\\D\\W\\S",
    "\\u00e9",
    "\\u{1F600}",
    "\\cA",
    "\\x41",
    "[^]",
    "a**",
    "\\z",
    "\\A",
    "(?i)abc",
    "(?P<n>x)",
    "[[:alpha:]]",
    "\\q",
    "x|",
    "]",
    "}",
    "a{99999}",
    "^\\p{Script=Hangul}+$",
    "[가-힣]+",
    "\\/",
    "(?:x)",
];

#[test]
fn r5_each_pattern_is_judged_as_the_compiler_judges_it_under_2020_12() {
    let mut checked = CheckedPatterns::default();
    let mut refused_by_draft_4 = 0;
    for pattern in PATTERNS {
        let expected = compiles_under_2020_12(pattern);
        assert_eq!(checked.compiles(pattern), expected, "{pattern:?}");
        // Asked again: a pattern that compiled is remembered, one that did not is not.
        assert_eq!(checked.compiles(pattern), expected, "{pattern:?}, again");
        refused_by_draft_4 += usize::from(expected && !compiles_under_draft_4(pattern));
    }
    // Some of the patterns are the kind only the second compilation judges.
    assert!(refused_by_draft_4 >= 5, "{refused_by_draft_4}");
}

proptest! {
    /// The check's premise: a pattern Draft 4 takes, 2020-12 takes; and the check's answer is
    /// 2020-12's for any text made of the characters regular expressions treat specially.
    #[test]
    fn r5_any_pattern_is_judged_as_2020_12_judges_it(
        pattern in proptest::collection::vec(
            prop::sample::select(
                "ab()[]{}\\^$|?*+.-,0129dwspPuxk<>=!:L가 ".chars().collect::<Vec<_>>(),
            ),
            0..10,
        ).prop_map(String::from_iter)
    ) {
        let expected = compiles_under_2020_12(&pattern);
        prop_assert!(!compiles_under_draft_4(&pattern) || expected, "{pattern:?}");
        prop_assert_eq!(CheckedPatterns::default().compiles(&pattern), expected, "{:?}", pattern);
    }
}
