//! Moonshine's tokenizer file (`tokenizer.bin`): the 32,000 token texts in id order, each a
//! length byte then that many bytes (a length of 128 or more continues in the next byte, seven
//! bits at a time). Ids 0–2 are `<unk>`, `<s>` and `</s>`; the byte tokens 3–258 hold the raw
//! byte; `▁` stands for a space. Decoding joins the bytes and reads them as UTF-8.

use std::path::Path;

/// The start of every decode.
pub const START: i64 = 1;
/// The end of a decode.
pub const END: i64 = 2;

/// Token texts by id.
#[derive(Debug)]
pub struct Tokenizer {
    tokens: Vec<Vec<u8>>,
}

#[derive(Debug, thiserror::Error)]
pub enum TokenizerError {
    #[error("cannot read {path}: {cause}")]
    Read { path: String, cause: String },
    #[error("the tokenizer file ends inside token {0}")]
    Truncated(usize),
    #[error("the tokenizer file holds {0} tokens, too few for a Moonshine vocabulary")]
    TooFew(usize),
}

/// Fewer tokens than this is not Moonshine's vocabulary (it has 32,000).
const MIN_TOKENS: usize = 1000;

impl Tokenizer {
    pub fn load(path: &Path) -> Result<Tokenizer, TokenizerError> {
        let bytes = std::fs::read(path).map_err(|err| TokenizerError::Read {
            path: path.display().to_string(),
            cause: err.to_string(),
        })?;
        Tokenizer::parse(&bytes)
    }

    pub fn parse(bytes: &[u8]) -> Result<Tokenizer, TokenizerError> {
        let mut tokens = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            let truncated = || TokenizerError::Truncated(tokens.len());
            let (mut len, mut shift) = (0usize, 0);
            loop {
                let (&byte, after) = rest.split_first().ok_or_else(truncated)?;
                rest = after;
                len |= usize::from(byte & 0x7f) << shift;
                shift += 7;
                if byte < 0x80 {
                    break;
                }
                if shift > 21 {
                    return Err(truncated());
                }
            }
            let text = rest.get(..len).ok_or_else(truncated)?;
            tokens.push(text.to_vec());
            rest = &rest[len..];
        }
        if tokens.len() < MIN_TOKENS {
            return Err(TokenizerError::TooFew(tokens.len()));
        }
        Ok(Tokenizer { tokens })
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// The text of `ids`: special tokens and ids outside the vocabulary left out, `▁` read as
    /// a space, leading and trailing spaces trimmed; invalid UTF-8 becomes U+FFFD.
    pub fn decode(&self, ids: &[i64]) -> String {
        let bytes: Vec<u8> = ids
            .iter()
            .filter(|&&id| id > END)
            .filter_map(|&id| self.tokens.get(usize::try_from(id).ok()?))
            .flatten()
            .copied()
            .collect();
        String::from_utf8_lossy(&bytes)
            .replace('\u{2581}', " ")
            .trim()
            .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A vocabulary shaped like Moonshine's: the three specials, the 256 byte tokens, then
    /// `extra`, padded to `MIN_TOKENS`.
    fn vocabulary(extra: &[&str]) -> Vec<u8> {
        let mut file = Vec::new();
        let mut push = |text: &[u8]| {
            let mut len = text.len();
            while len >= 0x80 {
                file.push((len & 0x7f) as u8 | 0x80);
                len >>= 7;
            }
            file.push(len as u8);
            file.extend_from_slice(text);
        };
        for special in ["<unk>", "<s>", "</s>"] {
            push(special.as_bytes());
        }
        for byte in 0..=255u8 {
            push(&[byte]);
        }
        for text in extra {
            push(text.as_bytes());
        }
        for i in 259 + extra.len()..MIN_TOKENS {
            push(format!("t{i}").as_bytes());
        }
        file
    }

    #[test]
    fn decodes_word_pieces_bytes_and_skips_special_tokens() {
        let tokenizer = Tokenizer::parse(&vocabulary(&["▁Go", "▁for", "ward", "."])).unwrap();
        assert_eq!(tokenizer.len(), MIN_TOKENS);
        assert_eq!(tokenizer.decode(&[1, 259, 260, 261, 262, 2]), "Go forward.");
        // "é" as two byte tokens (0xc3 0xa9 are ids 3 + byte).
        assert_eq!(tokenizer.decode(&[259, 3 + 0xc3, 3 + 0xa9]), "Goé");
        assert_eq!(tokenizer.decode(&[0, 40_000, -1, 259]), "Go");
        // A lone continuation byte is not text.
        assert_eq!(tokenizer.decode(&[3 + 0xa9]), "\u{fffd}");
    }

    #[test]
    fn long_token_texts_use_a_second_length_byte() {
        let long = "x".repeat(300);
        let tokenizer = Tokenizer::parse(&vocabulary(&[&long])).unwrap();
        assert_eq!(tokenizer.decode(&[259]), long);
    }

    #[test]
    fn a_cut_or_foreign_file_is_refused() {
        let file = vocabulary(&["▁word"]);
        let cut = Tokenizer::parse(&file[..file.len() - 2]).unwrap_err();
        assert!(matches!(cut, TokenizerError::Truncated(_)), "{cut}");
        let small = Tokenizer::parse(b"\x05<unk>\x03<s>").unwrap_err();
        assert!(matches!(small, TokenizerError::TooFew(2)), "{small}");
        assert!(Tokenizer::parse(&[0xff, 0xff, 0xff, 0xff, 0x01]).is_err());
    }
}
