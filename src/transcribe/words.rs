//! What counts as a word character in a transcript, shared by number normalisation and
//! dictionary corrections: Unicode letters and digits, `_`, combining marks, and an apostrophe
//! between two word characters.

/// A letter, digit, `_` or combining mark.
pub fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || is_combining_mark(c)
}

fn is_combining_mark(c: char) -> bool {
    matches!(
        c as u32,
        0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F
    )
}

/// `'` or `’`, which join two word characters into one word ("don't").
pub fn is_apostrophe(c: char) -> bool {
    c == '\'' || c == '\u{2019}'
}
