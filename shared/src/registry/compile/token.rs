//! HTTP header names as a manifest gives them: `x-mcp-header` annotations (CONTRACT N6) and
//! the `header` parameters of a REST-shaped tool (M2).

/// RFC 9110 `token`: one or more `tchar`.
pub(super) fn is_token(value: &str) -> bool {
    !value.is_empty()
        && value.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        })
}
