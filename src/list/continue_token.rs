//! Continue tokens: where a paginated list stopped, and at which revision.
//!
//! A token is opaque to clients: URL-safe base64 (no padding) of
//! `[version u8][revision u64 LE][key length u32 LE][key][crc32c u32 LE]`.
//! The version lets the format change; the checksum makes a truncated or
//! edited token an error rather than a different position. The key is the
//! last key served, so the next page starts strictly after it; the caller
//! checks it lies inside the collection being listed.
//!
//! Invariant: decoding never panics on any input (fuzzed); any defect is a
//! [`TokenError`].

use crate::log::Revision;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use bytes::Bytes;

/// The only format written and read today.
const TOKEN_VERSION: u8 = 1;
/// Longest token accepted, in characters: a key is at most a few hundred
/// bytes (group, resource, a 63-character namespace, a 253-character name).
pub const TOKEN_CHARS_MAX: usize = 2048;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContinueToken {
    /// The snapshot every page of the sequence is read at.
    pub revision: Revision,
    /// The last key served; the next page starts after it.
    pub start_after: Bytes,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("the token is longer than {TOKEN_CHARS_MAX} characters")]
    TooLong,
    #[error("the token is not base64")]
    NotBase64,
    #[error("the token is truncated")]
    Truncated,
    #[error("unknown token version {0}")]
    UnknownVersion(u8),
    #[error("the token's checksum does not match")]
    Checksum,
    #[error("the token has trailing bytes")]
    TrailingBytes,
}

impl ContinueToken {
    pub fn encode(&self) -> String {
        let mut raw = Vec::with_capacity(1 + 8 + 4 + self.start_after.len() + 4);
        raw.push(TOKEN_VERSION);
        raw.extend_from_slice(&self.revision.0.to_le_bytes());
        let len = u32::try_from(self.start_after.len()).unwrap_or(u32::MAX);
        raw.extend_from_slice(&len.to_le_bytes());
        raw.extend_from_slice(&self.start_after);
        let crc = crc32c::crc32c(&raw);
        raw.extend_from_slice(&crc.to_le_bytes());
        URL_SAFE_NO_PAD.encode(raw)
    }

    pub fn decode(text: &str) -> Result<ContinueToken, TokenError> {
        if text.len() > TOKEN_CHARS_MAX {
            return Err(TokenError::TooLong);
        }
        let raw = URL_SAFE_NO_PAD.decode(text.trim_end_matches('=')).map_err(|_| TokenError::NotBase64)?;
        let (&version, rest) = raw.split_first().ok_or(TokenError::Truncated)?;
        if version != TOKEN_VERSION {
            return Err(TokenError::UnknownVersion(version));
        }
        let revision = rest.get(..8).ok_or(TokenError::Truncated)?;
        let len = rest.get(8..12).ok_or(TokenError::Truncated)?;
        let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
        let key_end = 12usize.checked_add(len).ok_or(TokenError::Truncated)?;
        let key = rest.get(12..key_end).ok_or(TokenError::Truncated)?;
        let crc = rest.get(key_end..key_end + 4).ok_or(TokenError::Truncated)?;
        if rest.len() != key_end + 4 {
            return Err(TokenError::TrailingBytes);
        }
        let signed = &raw[..1 + key_end];
        if crc32c::crc32c(signed) != u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]) {
            return Err(TokenError::Checksum);
        }
        let mut revision_bytes = [0u8; 8];
        revision_bytes.copy_from_slice(revision);
        Ok(ContinueToken {
            revision: Revision(u64::from_le_bytes(revision_bytes)),
            start_after: Bytes::copy_from_slice(key),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token() -> ContinueToken {
        ContinueToken {
            revision: Revision(1234),
            start_after: Bytes::from_static(b"/registry/core/pods/default/web-7"),
        }
    }

    #[test]
    fn round_trips() {
        let text = token().encode();
        assert!(text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'), "{text}");
        assert_eq!(ContinueToken::decode(&text), Ok(token()));
    }

    #[test]
    fn every_truncation_and_every_edit_is_an_error() {
        let text = token().encode();
        for n in 0..text.len() {
            assert!(ContinueToken::decode(&text[..n]).is_err(), "truncated to {n}");
        }
        for (i, c) in text.char_indices() {
            let replacement = if c == 'A' { 'B' } else { 'A' };
            let mut edited = text.clone();
            edited.replace_range(i..i + 1, &replacement.to_string());
            // An edit in the last character may only touch padding bits.
            if let Ok(decoded) = ContinueToken::decode(&edited) {
                assert_eq!(decoded, token(), "edit at {i} decoded to another position");
            }
        }
        assert_eq!(ContinueToken::decode("garbage!"), Err(TokenError::NotBase64));
        assert_eq!(ContinueToken::decode(&"A".repeat(TOKEN_CHARS_MAX + 1)), Err(TokenError::TooLong));
        assert_eq!(ContinueToken::decode(""), Err(TokenError::Truncated));
    }
}
