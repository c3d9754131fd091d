//! Text keys for matching people's words the way they expect: case- and accent-insensitive
//! (dictionary terms, snippet triggers) or case-insensitive only (correction originals).

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Case- and accent-insensitive key: canonical decomposition without combining marks,
/// lower-cased (`Café` and `CAFE` share the key `cafe`).
pub fn fold(text: &str) -> String {
    text.nfd()
        .filter(|c| !is_combining_mark(*c))
        .collect::<String>()
        .to_lowercase()
}

/// Case-insensitive key that keeps accents (`Café` and `CAFÉ` match, `Cafe` does not).
pub fn case_key(text: &str) -> String {
    text.nfc().collect::<String>().to_lowercase()
}

/// The order people expect in lists: case- and accent-insensitive (`Äpfel` before `Birne`),
/// ties broken by the exact text.
pub fn display_order(a: &str, b: &str) -> std::cmp::Ordering {
    fold(a).cmp(&fold(b)).then_with(|| a.cmp(b))
}

/// Words in `text`, as counted for history entries.
pub fn count_words(text: &str) -> u32 {
    text.split_whitespace().count().min(u32::MAX as usize) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_ignores_case_and_accents() {
        assert_eq!(fold("Café"), "cafe");
        assert_eq!(fold("CAFE\u{301}"), "cafe");
        assert_eq!(fold("Ärger"), fold("arger"));
        assert_ne!(fold("cafe"), fold("cafes"));
    }

    #[test]
    fn case_key_keeps_accents() {
        assert_eq!(case_key("CAFÉ"), case_key("café"));
        assert_eq!(case_key("cafe\u{301}"), case_key("CAFÉ"));
        assert_ne!(case_key("cafe"), case_key("café"));
    }

    #[test]
    fn words_are_split_on_whitespace() {
        assert_eq!(count_words("  hello   wide\nworld "), 3);
        assert_eq!(count_words(""), 0);
    }
}
