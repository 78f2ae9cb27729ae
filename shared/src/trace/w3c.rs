//! The W3C texts a caller's trace context brings, checked with work linear in their length and
//! bounded (CONTRACT O1): tracestate (W3C Trace Context §3.3) and baggage (W3C Baggage), each
//! cut at its byte limit before it is split and counted while it is split.

/// W3C Trace Context §3.3: at most 32 list members of `key=value`, every value non-empty, no key
/// twice (the propagator's own parser takes duplicates and empty values). The work is linear in
/// the text and bounded (CONTRACT O1): a text over [`MAX_TRACESTATE_BYTES`] is refused before it
/// is split, and the split stops at the 33rd member.
pub(super) fn tracestate_is_valid(text: &str) -> bool {
    if text.len() > MAX_TRACESTATE_BYTES {
        return false;
    }
    let mut keys: Vec<&str> = Vec::with_capacity(MAX_TRACESTATE_MEMBERS);
    for member in text.split(',').map(str::trim).filter(|m| !m.is_empty()) {
        // The limit is enforced while counting: at most 32 keys are ever compared.
        if keys.len() == MAX_TRACESTATE_MEMBERS {
            return false;
        }
        let Some((key, value)) = member.split_once('=') else {
            return false;
        };
        if key.is_empty() || value.is_empty() || keys.contains(&key) {
            return false;
        }
        keys.push(key);
    }
    true
}

/// Longest tracestate read, in bytes: 32 members of W3C's longest key (256) and value (256)
/// with their `=` and `,` separators and some optional white space (CONTRACT O1).
const MAX_TRACESTATE_BYTES: usize = 32 * (256 + 1 + 256 + 2);
/// W3C Trace Context's limit on tracestate list members.
const MAX_TRACESTATE_MEMBERS: usize = 32;
/// W3C Baggage's limits (§3.3.1): the whole header's bytes and its list members.
const MAX_BAGGAGE_BYTES: usize = 8192;
/// See [`MAX_BAGGAGE_BYTES`].
const MAX_BAGGAGE_MEMBERS: usize = 64;

/// An RFC 7230 `tchar`, of which a baggage key is made.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// W3C Baggage's `baggage-octet` (%x21 / %x23-2B / %x2D-3A / %x3C-5B / %x5D-7E): printable ASCII
/// but space, `"`, `,`, `;` and `\`; `%` starts a percent-encoded octet.
fn is_baggage_octet(b: u8) -> bool {
    matches!(b, 0x21 | 0x23..=0x2B | 0x2D..=0x3A | 0x3C..=0x5B | 0x5D..=0x7E)
}

/// One `key OWS "=" OWS value` of a list member or property.
fn key_value_is_valid(text: &str, value_required: bool) -> bool {
    let text = text.trim_matches([' ', '\t']);
    match text.split_once('=') {
        Some((key, value)) => {
            let key = key.trim_end_matches([' ', '\t']);
            let value = value.trim_start_matches([' ', '\t']);
            !key.is_empty() && key.bytes().all(is_tchar) && value.bytes().all(is_baggage_octet)
        }
        None => !value_required && !text.is_empty() && text.bytes().all(is_tchar),
    }
}

/// The caller's baggage as received (trimmed), when the whole value is valid W3C Baggage within
/// its limits (8,192 bytes, 64 list members), else `None` (CONTRACT O1, O2). It is passed on as
/// it came, never decoded and written again: what reaches a Tool Service is exactly what the
/// caller sent, and a percent-encoded `,` or line break stays encoded.
pub(super) fn baggage_of(text: &str) -> Option<String> {
    let text = text.trim_matches([' ', '\t']);
    if text.is_empty() || text.len() > MAX_BAGGAGE_BYTES {
        return None;
    }
    for (members, member) in text.split(',').enumerate() {
        // Counted while splitting: the 65th member ends the walk.
        if members == MAX_BAGGAGE_MEMBERS {
            return None;
        }
        let mut parts = member.split(';');
        if !parts.next().is_some_and(|kv| key_value_is_valid(kv, true)) {
            return None;
        }
        if !parts.all(|property| key_value_is_valid(property, false)) {
            return None;
        }
    }
    Some(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn o2_valid_baggage_goes_on_as_it_came_and_invalid_baggage_not_at_all() {
        for valid in [
            "userId=alice, serverNode = DF28",
            "token=YWJj==,a=b",
            "k=v;p%2Cinjected=evil",
            "k=v;prop;other=1",
            "k=",
        ] {
            assert_eq!(baggage_of(valid).as_deref(), Some(valid), "{valid}");
        }
        assert_eq!(baggage_of("  a=1  ").as_deref(), Some("a=1"));
        for invalid in [
            "=nokey",
            "novalue",
            "k=v,",
            "k=\"quoted\"",
            "k=a b",
            "k=é",
            "k=v;p\r\nx",
            "k=v\\",
            "",
        ] {
            assert_eq!(baggage_of(invalid), None, "{invalid:?}");
        }
        // W3C's limits: 64 members, 8,192 bytes.
        let members = |n: usize| vec!["k=v"; n].join(",");
        assert!(baggage_of(&members(64)).is_some());
        assert_eq!(baggage_of(&members(65)), None);
        assert_eq!(baggage_of(&format!("k={}", "v".repeat(8191))), None);
        assert!(baggage_of(&format!("k={}", "v".repeat(8190))).is_some());
    }

    #[test]
    fn o1_a_tracestate_with_a_key_twice_or_an_empty_value_is_none() {
        assert!(tracestate_is_valid(
            "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"
        ));
        assert!(tracestate_is_valid(""));
        assert!(!tracestate_is_valid("a=1,a=2"));
        assert!(!tracestate_is_valid("k="));
        assert!(!tracestate_is_valid("novalue"));
        let many: Vec<String> = (0..33).map(|i| format!("k{i}=v")).collect();
        assert!(!tracestate_is_valid(&many.join(",")));
        assert!(tracestate_is_valid(&many[..32].join(",")));
    }

    /// CONTRACT O1: the 33rd member drops the value however many follow, and a text over the
    /// byte limit is refused before it is split.
    #[test]
    fn o1_the_33rd_tracestate_member_or_the_byte_limit_drops_the_value() {
        let members: Vec<String> = (0..140_000).map(|i| format!("k{i}=v")).collect();
        let huge = members.join(",");
        assert!(huge.len() > MAX_TRACESTATE_BYTES);
        assert!(!tracestate_is_valid(&huge));
        // Within the byte limit, still refused at the 33rd member.
        let thirty_three = members[..33].join(",");
        assert!(thirty_three.len() < MAX_TRACESTATE_BYTES);
        assert!(!tracestate_is_valid(&thirty_three));
        // The longest valid one: 32 members of 256-byte keys and values.
        let longest: Vec<String> = (0..32)
            .map(|i| format!("{}{i:02}={}", "k".repeat(254), "v".repeat(256)))
            .collect();
        let longest = longest.join(",");
        assert!(longest.len() <= MAX_TRACESTATE_BYTES);
        assert!(tracestate_is_valid(&longest));
        assert!(!tracestate_is_valid(&format!(
            "{longest}{}",
            " ".repeat(MAX_TRACESTATE_BYTES)
        )));
    }
}
