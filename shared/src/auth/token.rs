//! Personal access tokens (CONTRACT A3): `mcpat_` + base62 of 32 random bytes + a base62 CRC32
//! checksum (issue "inbound authentication"; seed ADR 004: one token per delegation, only its
//! hash stored, CONTRACT A4).
//!
//! A token is checked offline first: prefix, length, alphabet and checksum (CONTRACT A3). A token
//! that fails these checks is answered 401 without touching the delegation store (A3, A6). The
//! store only ever sees [`token_key`], the hex SHA-256 of the whole token (CONTRACT A4).

use std::fmt;

use sha2::{Digest, Sha256};

/// The prefix of every personal access token (CONTRACT A3).
pub const TOKEN_PREFIX: &str = "mcpat_";

/// The base62 alphabet (digits, upper case, lower case).
const ALPHABET: &str = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/// Random bytes per token.
const SECRET_BYTES: usize = 32;
/// Base62 characters of the secret: 32 bytes need at most 43 (62^43 > 2^256).
const SECRET_CHARS: usize = 43;
/// Base62 characters of the CRC32 checksum: 62^6 > 2^32.
const CHECKSUM_CHARS: usize = 6;
/// Total token length in characters.
pub const TOKEN_LEN: usize = TOKEN_PREFIX.len() + SECRET_CHARS + CHECKSUM_CHARS;

/// A well-formed personal access token (CONTRACT A3). Its `Debug` form never shows the secret
/// (A11).
#[derive(Clone, PartialEq, Eq)]
pub struct PersonalToken(String);

impl fmt::Debug for PersonalToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PersonalToken(mcpat_…)")
    }
}

/// Why a token failed the offline checks (CONTRACT A3; answered with the 401 of A6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TokenFormatError {
    /// Not `mcpat_` + 49 base62 characters.
    #[error("not a personal access token")]
    Malformed,
    /// The checksum does not match the secret (a typo or a forged token).
    #[error("token checksum does not match")]
    BadChecksum,
}

/// Why no token could be generated.
#[derive(Debug, thiserror::Error)]
#[error("the system random source failed: {0}")]
pub struct RandomError(String);

impl PersonalToken {
    /// A new token from 32 bytes of the operating system's random source.
    ///
    /// # Errors
    /// [`RandomError`] when the random source fails.
    pub fn generate() -> Result<Self, RandomError> {
        let mut secret = [0_u8; SECRET_BYTES];
        getrandom::fill(&mut secret).map_err(|e| RandomError(e.to_string()))?;
        Ok(Self::from_secret(&secret))
    }

    /// The token of these 32 secret bytes.
    #[must_use]
    pub fn from_secret(secret: &[u8; SECRET_BYTES]) -> Self {
        let body = padded(&base_x::encode(ALPHABET, secret), SECRET_CHARS);
        let checksum = checksum_of(&body);
        Self(format!("{TOKEN_PREFIX}{body}{checksum}"))
    }

    /// Checks the form and checksum of `text` (CONTRACT A3: a malformed token never reaches
    /// the store).
    ///
    /// # Errors
    /// [`TokenFormatError::Malformed`] or [`TokenFormatError::BadChecksum`].
    pub fn parse(text: &str) -> Result<Self, TokenFormatError> {
        let rest = text
            .strip_prefix(TOKEN_PREFIX)
            .filter(|rest| rest.len() == SECRET_CHARS + CHECKSUM_CHARS)
            .filter(|rest| rest.bytes().all(|b| b.is_ascii_alphanumeric()))
            .ok_or(TokenFormatError::Malformed)?;
        let (body, checksum) = rest.split_at(SECRET_CHARS);
        // The secret must be a 256-bit number: a 43-character base62 string can hold more.
        let decoded = base_x::decode(ALPHABET, body).map_err(|_| TokenFormatError::Malformed)?;
        if decoded.iter().skip_while(|b| **b == 0).count() > SECRET_BYTES {
            return Err(TokenFormatError::Malformed);
        }
        if checksum_of(body) != checksum {
            return Err(TokenFormatError::BadChecksum);
        }
        Ok(Self(text.to_string()))
    }

    /// The whole token text, to print once at creation.
    #[must_use]
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The store key of this token: `tok#` + hex SHA-256 of the token text (CONTRACT A4).
    #[must_use]
    pub fn store_key(&self) -> String {
        token_key(&self.0)
    }
}

/// `tok#` + lower-case hex SHA-256 of `token`: the only form in which a token is stored
/// (CONTRACT A4).
#[must_use]
pub fn token_key(token: &str) -> String {
    format!("tok#{}", hex::encode(Sha256::digest(token.as_bytes())))
}

/// Base62 of the CRC32 of `body`, six characters.
fn checksum_of(body: &str) -> String {
    let crc = crc32fast::hash(body.as_bytes());
    padded(
        &base_x::encode(ALPHABET, &crc.to_be_bytes()),
        CHECKSUM_CHARS,
    )
}

/// `text` left-padded with `0` (base62 zero) to `width` characters.
fn padded(text: &str, width: usize) -> String {
    format!("{text:0>width$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a3_generated_tokens_have_the_prefix_fixed_length_and_parse_back() {
        for _ in 0..200 {
            let token = PersonalToken::generate().unwrap();
            assert_eq!(token.expose().len(), TOKEN_LEN);
            assert!(token.expose().starts_with("mcpat_"));
            assert_eq!(PersonalToken::parse(token.expose()), Ok(token));
        }
    }

    #[test]
    fn a3_small_and_large_secrets_keep_the_fixed_width() {
        for secret in [[0_u8; 32], [255_u8; 32], {
            let mut s = [0_u8; 32];
            s[31] = 1;
            s
        }] {
            let token = PersonalToken::from_secret(&secret);
            assert_eq!(token.expose().len(), TOKEN_LEN);
            assert!(PersonalToken::parse(token.expose()).is_ok());
        }
    }

    #[test]
    fn a3_a_changed_character_fails_the_checksum() {
        let token = PersonalToken::from_secret(&[7; 32]);
        let mut text = token.expose().to_string();
        let i = TOKEN_PREFIX.len() + 5;
        let replacement = if &text[i..=i] == "a" { "b" } else { "a" };
        text.replace_range(i..=i, replacement);
        assert_eq!(
            PersonalToken::parse(&text),
            Err(TokenFormatError::BadChecksum)
        );
    }

    #[test]
    fn a3_wrong_prefix_length_or_alphabet_is_malformed() {
        let good = PersonalToken::from_secret(&[9; 32]).expose().to_string();
        for bad in [
            String::new(),
            "mcpat_".into(),
            good.replace("mcpat_", "ghp_xx"),
            format!("{good}0"),
            good[..good.len() - 1].to_string(),
            {
                let mut text = good.clone();
                text.replace_range(10..11, "-");
                text
            },
            format!("mcpat_{}", "z".repeat(49)),
        ] {
            assert_eq!(
                PersonalToken::parse(&bad),
                Err(TokenFormatError::Malformed),
                "{bad}"
            );
        }
    }

    #[test]
    fn a4_the_store_key_is_the_hex_sha256_and_debug_hides_the_secret() {
        let token = PersonalToken::from_secret(&[1; 32]);
        let key = token.store_key();
        assert!(key.starts_with("tok#"));
        assert_eq!(key.len(), 4 + 64);
        assert!(!format!("{token:?}").contains(&token.expose()[6..]));
    }
}
