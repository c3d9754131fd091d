//! Parsing number words into values: neighbouring words by gap, numbers below one hundred,
//! groups with "hundred", and whole cardinals or ordinals with their scale words.

use super::split::{Gap, Word};
use super::tokens::Tok;

/// A parsed stretch of number words: `end` is the index of the first word after it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Part {
    pub value: u64,
    pub end: usize,
    pub ordinal: bool,
}

impl Part {
    fn cardinal(value: u64, end: usize) -> Part {
        Part {
            value,
            end,
            ordinal: false,
        }
    }

    fn ordinal(value: u64, end: usize) -> Part {
        Part {
            value,
            end,
            ordinal: true,
        }
    }
}

/// The words of a text and the gaps between them.
pub(super) struct Parser<'a> {
    pub words: &'a [Word],
    /// `gaps[i]` separates `words[i]` from `words[i + 1]`.
    pub gaps: &'a [Gap],
    /// `starts_sentence[i]`: `words[i]` begins the text or follows a full stop, question or
    /// exclamation mark.
    pub starts_sentence: &'a [bool],
}

impl Parser<'_> {
    /// The token of word `i` if it follows word `i - 1` across spaces, else `Other`.
    pub(super) fn spaced(&self, i: usize) -> Tok {
        self.after(i, |gap| gap == Gap::Space)
    }

    /// Like [`Self::spaced`], but a hyphen also joins.
    pub(super) fn joined(&self, i: usize) -> Tok {
        self.after(i, |gap| gap != Gap::Other)
    }

    fn after(&self, i: usize, accept: impl Fn(Gap) -> bool) -> Tok {
        match (
            i.checked_sub(1).and_then(|p| self.gaps.get(p)),
            self.words.get(i),
        ) {
            (Some(&gap), Some(word)) if accept(gap) => word.tok,
            _ => Tok::Other,
        }
    }

    /// The token of the word before `i` if it is separated from word `i` by spaces.
    pub(super) fn spaced_before(&self, i: usize) -> Tok {
        match i.checked_sub(1) {
            Some(p) if self.gaps.get(p) == Some(&Gap::Space) => self.words[p].tok,
            _ => Tok::Other,
        }
    }

    /// Numbers below one hundred: "seven", "thirteen", "forty", "forty-two", "twenty first".
    fn tens_part(&self, i: usize, tok: Tok) -> Option<Part> {
        match tok {
            Tok::Unit(n) | Tok::Teen(n) => Some(Part::cardinal(n, i + 1)),
            Tok::OrdUnit(n) | Tok::OrdTeen(n) | Tok::OrdTens(n) => Some(Part::ordinal(n, i + 1)),
            Tok::Tens(n) => Some(match self.joined(i + 1) {
                Tok::Unit(u) => Part::cardinal(n + u, i + 2),
                Tok::OrdUnit(u) => Part::ordinal(n + u, i + 2),
                _ => Part::cardinal(n, i + 1),
            }),
            _ => None,
        }
    }

    /// A group in front of a scale word: "three", "a hundred and five", "twenty five hundred".
    fn segment(&self, i: usize, tok: Tok, allow_a: bool) -> Option<Part> {
        let lead = match tok {
            Tok::A if allow_a => match self.spaced(i + 1) {
                Tok::Hundred => Part::cardinal(1, i + 1),
                Tok::Scale(1_000) => return Some(Part::cardinal(1, i + 1)),
                _ => return None,
            },
            Tok::A => return None,
            _ => {
                let lead = self.tens_part(i, tok)?;
                if lead.ordinal {
                    return Some(lead);
                }
                lead
            }
        };
        Some(self.hundreds(lead))
    }

    /// `lead` times a "hundred" or "hundredth" that follows it, with the "and" and the part
    /// below one hundred after that ("two hundred and first").
    fn hundreds(&self, lead: Part) -> Part {
        let k = lead.end;
        match self.spaced(k) {
            Tok::OrdHundred => Part::ordinal(lead.value * 100, k + 1),
            Tok::Hundred => {
                let mut part = Part::cardinal(lead.value * 100, k + 1);
                let (j, next) = match self.spaced(k + 1) {
                    Tok::And => (k + 2, self.spaced(k + 2)),
                    next => (k + 1, next),
                };
                if let Some(rest) = self.tens_part(j, next) {
                    part.value += rest.value;
                    part.end = rest.end;
                    part.ordinal = rest.ordinal;
                }
                part
            }
            _ => lead,
        }
    }

    /// A whole cardinal or ordinal number starting at word `i`.
    pub(super) fn cardinal(&self, i: usize, tok: Tok) -> Option<Part> {
        if tok == Tok::Zero {
            return Some(Part::cardinal(0, i + 1));
        }
        let mut total = 0u64;
        let mut last_scale = u64::MAX;
        let mut k = i;
        let mut tok = tok;
        let mut first = true;
        while let Some(seg) = self.segment(k, tok, first) {
            if !first && seg.value >= 1_000 {
                break;
            }
            if seg.ordinal {
                return Some(Part::ordinal(total + seg.value, seg.end));
            }
            match self.spaced(seg.end) {
                next @ (Tok::Scale(s) | Tok::OrdScale(s))
                    if seg.value < 1_000 && s < last_scale =>
                {
                    total += seg.value * s;
                    if matches!(next, Tok::OrdScale(_)) {
                        return Some(Part::ordinal(total, seg.end + 1));
                    }
                    last_scale = s;
                    k = seg.end + 1;
                    first = false;
                    if self.spaced(k) == Tok::And {
                        return self.after_and(k, total);
                    }
                    tok = self.spaced(k);
                    continue;
                }
                // A scale out of order ("three thousand two million"): end before this group.
                Tok::Scale(_) | Tok::OrdScale(_) if !first => break,
                _ => {}
            }
            return Some(Part::cardinal(total + seg.value, seg.end));
        }
        (!first).then_some(Part::cardinal(total, k))
    }

    /// "two thousand and six": the group after the "and" at word `k` ends the number that has
    /// reached `total`. Without such a group the number ends before the "and".
    fn after_and(&self, k: usize, total: u64) -> Option<Part> {
        match self.segment(k + 1, self.spaced(k + 1), false) {
            Some(rest) if rest.value < 1_000 => Some(Part {
                value: total + rest.value,
                end: rest.end,
                ordinal: rest.ordinal,
            }),
            _ => Some(Part::cardinal(total, k)),
        }
    }
}
