//! Turning arbitrary document keys into safe, reversible file names.
//!
//! Keys are ids chosen by hosts and models, so they may hold anything: `..`,
//! `/`, `\`, NUL, unicode, or a thousand characters. A file name built from a
//! key must never leave its directory, never be hidden, never collide with
//! another key's name, and give the original key back for `list`.
//!
//! The stem is the key percent-encoded: every byte outside `[a-z0-9_-]`
//! becomes `%XX` (upper-case hex). `.` is escaped, so a stem never starts with
//! a dot and cannot be `.` or `..`; `/` and `\` are escaped, so it is one path
//! component. Upper-case letters are escaped too, so keys that differ only in
//! case stay distinct on case-insensitive file systems (macOS, Windows); the
//! common lower-case uuid stays readable. The empty key, whose encoding would
//! be empty (a hidden `.json`), is spelled `%`, which no other key encodes to.
//!
//! File names are limited to 255 bytes almost everywhere, and an encoded key
//! can be three times longer than the key. A stem longer than [`MAX_STEM`]
//! is cut to a prefix and suffixed with `~` and a stable 64-bit hash of the
//! whole key; such names cannot be decoded, so the file store keeps the key
//! inside the file (see `file.rs`).

/// Longest stem kept as is. With `.json`, names stay far below 255 bytes.
pub(crate) const MAX_STEM: usize = 150;

/// Length of the readable prefix kept in front of the hash of a long key.
const HASHED_PREFIX: usize = 128;

/// Marks a hashed stem. Never produced by [`encode`].
const HASH_MARK: char = '~';

/// Spelling of the empty key.
const EMPTY: &str = "%";

/// The file stem for `key`, and whether it is hashed (not decodable).
pub(crate) fn file_stem(key: &str) -> (String, bool) {
    let encoded = encode(key);
    if encoded.len() <= MAX_STEM {
        return (encoded, false);
    }
    // The encoding is ASCII, so any byte offset is a char boundary; only an
    // escape cut in half needs trimming.
    let prefix = trim_partial_escape(&encoded[..HASHED_PREFIX]);
    let hash = fnv1a64(key.as_bytes());
    (format!("{prefix}{HASH_MARK}{hash:016x}"), true)
}

/// Whether `stem` names a hashed (long) key.
pub(crate) fn is_hashed(stem: &str) -> bool {
    stem.contains(HASH_MARK)
}

/// Percent-encodes `key`; see the module docs.
pub(crate) fn encode(key: &str) -> String {
    if key.is_empty() {
        return EMPTY.to_string();
    }
    let mut out = String::with_capacity(key.len());
    for &b in key.as_bytes() {
        if is_plain(b) {
            out.push(char::from(b));
        } else {
            out.push('%');
            out.push(hex_digit(b >> 4));
            out.push(hex_digit(b & 0x0f));
        }
    }
    out
}

/// The key `stem` encodes, or `None` if `encode` never produces it (a file
/// someone else put there, or a hashed stem).
pub(crate) fn decode(stem: &str) -> Option<String> {
    if stem == EMPTY {
        return Some(String::new());
    }
    let bytes = stem.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hi = from_hex_digit(*bytes.get(i + 1)?)?;
            let lo = from_hex_digit(*bytes.get(i + 2)?)?;
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    let key = String::from_utf8(out).ok()?;
    // Only the canonical spelling decodes, so each name maps to one key.
    (encode(&key) == stem).then_some(key)
}

/// FNV-1a, 64 bits: tiny, and stable across builds and platforms (unlike
/// `std`'s `DefaultHasher`), which file names need.
pub(crate) fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

fn is_plain(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-'
}

fn hex_digit(n: u8) -> char {
    char::from(b"0123456789ABCDEF"[usize::from(n)])
}

fn from_hex_digit(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// Drops a trailing `%` or `%X` left by cutting through an escape.
fn trim_partial_escape(s: &str) -> &str {
    let b = s.as_bytes();
    let n = b.len();
    if n >= 1 && b[n - 1] == b'%' {
        &s[..n - 1]
    } else if n >= 2 && b[n - 2] == b'%' {
        &s[..n - 2]
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_awkward_keys() {
        let long = "x".repeat(40);
        let keys = [
            "",
            ".",
            "..",
            "/",
            "\\",
            "a/../../etc/passwd",
            "nul\0byte",
            "Mixed Case",
            "ünïcödé ✓ 日本",
            "%",
            "%25",
            "~",
            ".hidden",
            long.as_str(),
        ];
        for key in keys {
            let (stem, hashed) = file_stem(key);
            assert!(!hashed, "{key:?} should not be hashed");
            assert!(!stem.is_empty());
            assert!(!stem.starts_with('.'), "{stem}");
            assert!(!stem.contains(['/', '\\', '\0']), "{stem}");
            assert_eq!(decode(&stem).as_deref(), Some(key), "stem {stem}");
        }
    }

    #[test]
    fn lower_case_ids_stay_readable() {
        let id = "550e8400-e29b-41d4-a716-446655440000";
        assert_eq!(encode(id), id);
        assert_eq!(encode("a.b"), "a%2Eb");
        assert_eq!(encode("A"), "%41");
    }

    #[test]
    fn keys_differing_in_case_get_names_differing_beyond_case() {
        let a = encode("Session").to_ascii_lowercase();
        let b = encode("session").to_ascii_lowercase();
        assert_ne!(a, b);
    }

    #[test]
    fn non_canonical_names_do_not_decode() {
        for stem in ["%2e", "a.b", "%%", "%4", "%ZZ", "A", "%FF", "x~0123", ""] {
            assert_eq!(decode(stem), None, "{stem}");
        }
    }

    #[test]
    fn long_keys_are_hashed_and_bounded() {
        for key in ["a".repeat(1000), ".".repeat(1000), "é".repeat(500)] {
            let (stem, hashed) = file_stem(&key);
            assert!(hashed);
            assert!(is_hashed(&stem));
            assert!(stem.len() <= MAX_STEM, "{} bytes", stem.len());
            assert!(!stem.starts_with('.'));
            assert_eq!(decode(&stem), None);
            assert_eq!(file_stem(&key).0, stem, "stable");
        }
        let (a, _) = file_stem(&format!("{}1", "a".repeat(200)));
        let (b, _) = file_stem(&format!("{}2", "a".repeat(200)));
        assert_ne!(a, b);
    }

    #[test]
    fn hashed_prefix_never_ends_inside_an_escape() {
        for pad in 0..4 {
            let key = format!("{}{}", "a".repeat(pad), ".".repeat(300));
            let (stem, _) = file_stem(&key);
            let prefix = stem.split(HASH_MARK).next().unwrap();
            assert!(decode(prefix).is_some(), "{prefix}");
        }
    }

    #[test]
    fn fnv_is_the_reference_function() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
