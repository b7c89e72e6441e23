//! A standard-alphabet base64 decoder for `sendBytes` (padding optional,
//! whitespace ignored), so the suite needs no extra dependency.

pub fn decode(text: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    let mut padding = false;
    for c in text.chars().filter(|c| !c.is_ascii_whitespace()) {
        if c == '=' {
            padding = true;
            continue;
        }
        if padding {
            return Err(format!("base64: {c:?} after padding"));
        }
        let value = match c {
            'A'..='Z' => c as u32 - 'A' as u32,
            'a'..='z' => c as u32 - 'a' as u32 + 26,
            '0'..='9' => c as u32 - '0' as u32 + 52,
            '+' => 62,
            '/' => 63,
            _ => return Err(format!("base64: invalid character {c:?}")),
        };
        acc = (acc << 6) | value;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if bits >= 6 {
        return Err("base64: truncated input".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn decodes_standard_base64() {
        assert_eq!(decode("").unwrap(), b"");
        assert_eq!(decode("Zg==").unwrap(), b"f");
        assert_eq!(decode("Zm8=").unwrap(), b"fo");
        assert_eq!(decode("Zm9v").unwrap(), b"foo");
        assert_eq!(decode("Zm9vYg").unwrap(), b"foob");
        assert_eq!(decode("/w==").unwrap(), [0xff]);
        assert_eq!(decode("eyJ4Ijoi/v8ifQ==").unwrap(), b"{\"x\":\"\xfe\xff\"}");
    }

    #[test]
    fn rejects_garbage() {
        assert!(decode("Zm9v!").is_err());
        assert!(decode("Z").is_err());
        assert!(decode("Zg==Zg").is_err());
    }
}
