//! Splitting the text into words and telling what separates neighbouring words.

use super::tokens::{Tok, classify};
use crate::transcribe::words::{is_apostrophe, is_word_char};

/// What separates two neighbouring words.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Gap {
    /// Horizontal whitespace only (no line break).
    Space,
    /// A single hyphen, as in "twenty-five".
    Hyphen,
    Other,
}

#[derive(Clone, Copy, Debug)]
/// A word of the text: its byte range and its token.
pub(super) struct Word {
    pub start: usize,
    pub end: usize,
    pub tok: Tok,
}

/// The words of `text`, each with its token.
pub(super) fn split_words(text: &str) -> Vec<Word> {
    let mut words = Vec::new();
    let mut start: Option<usize> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if is_word_char(c) {
            start.get_or_insert(i);
            continue;
        }
        if let Some(s) = start {
            let inner_apostrophe =
                is_apostrophe(c) && chars.peek().is_some_and(|&(_, next)| is_word_char(next));
            if inner_apostrophe {
                continue;
            }
            words.push(Word {
                start: s,
                end: i,
                tok: classify(&text[s..i]),
            });
            start = None;
        }
    }
    if let Some(s) = start {
        words.push(Word {
            start: s,
            end: text.len(),
            tok: classify(&text[s..]),
        });
    }
    words
}

/// What the text `gap` between two words is.
pub(super) fn classify_gap(gap: &str) -> Gap {
    if gap == "-" || gap == "\u{2010}" {
        return Gap::Hyphen;
    }
    let horizontal = |c: char| {
        c.is_whitespace()
            && !matches!(
                c,
                '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}'
            )
    };
    if !gap.is_empty() && gap.chars().all(horizontal) {
        Gap::Space
    } else {
        Gap::Other
    }
}
