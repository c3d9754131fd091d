//! The forms a number takes in the text: years, decades and centuries, ordinals (or the
//! fractions and words they stay), decimals and percentages, and small numbers left spelled out.

use super::parser::{Parser, Part};
use super::tokens::Tok;

/// A recognised number ready to be written out.
#[derive(Debug)]
pub(super) struct Number {
    /// The index of the first word after the number.
    pub end: usize,
    pub text: String,
    /// Kept as written (small standalone number, fraction, "first"/"second").
    pub keep: bool,
}

/// "st", "nd", "rd" or "th".
pub(super) fn ordinal_suffix(value: u64) -> &'static str {
    match (value % 10, value % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

impl Parser<'_> {
    /// The number starting at word `i`, if any.
    pub(super) fn number_at(&self, i: usize) -> Option<Number> {
        let tok = self.words[i].tok;
        if !matches!(
            tok,
            Tok::Zero
                | Tok::Unit(_)
                | Tok::Teen(_)
                | Tok::Tens(_)
                | Tok::OrdUnit(_)
                | Tok::OrdTeen(_)
                | Tok::OrdTens(_)
                | Tok::A
        ) {
            return None;
        }
        if let Some((text, end)) = self.year(i, tok) {
            return Some(Number {
                end,
                text,
                keep: false,
            });
        }
        let part = self.cardinal(i, tok)?;
        Some(if part.ordinal {
            self.ordinal(i, tok, part)
        } else {
            self.cardinal_number(i, part)
        })
    }

    /// Year style: "nineteen ninety nine", "twenty twenty four", "nineteen oh five", and
    /// decades or centuries ("nineteen nineties", "eighteen hundreds"). Returns the year as
    /// written in digits and the index of the word after it.
    fn year(&self, i: usize, tok: Tok) -> Option<(String, usize)> {
        let high = match tok {
            Tok::Teen(n) if n >= 13 => n,
            Tok::Tens(20) => 20,
            _ => return None,
        };
        let (low, end) = match self.spaced(i + 1) {
            Tok::TensPlural(n) => return Some((format!("{}s", high * 100 + n), i + 2)),
            Tok::Hundreds => return Some((format!("{}s", high * 100), i + 2)),
            Tok::Teen(n) => (n, i + 2),
            Tok::Tens(n) => match self.joined(i + 2) {
                Tok::Unit(u) => (n + u, i + 3),
                Tok::OrdUnit(_) => return None,
                _ => (n, i + 2),
            },
            Tok::Oh => match self.spaced(i + 2) {
                Tok::Unit(u) => (u, i + 3),
                _ => return None,
            },
            _ => return None,
        };
        if matches!(
            self.spaced(end),
            Tok::Hundred | Tok::OrdHundred | Tok::Scale(_) | Tok::OrdScale(_)
        ) {
            return None;
        }
        Some(((high * 100 + low).to_string(), end))
    }

    /// The ordinal `part` starting at word `i` (whose token is `tok`): "21st", or kept as a
    /// word where it reads as a fraction, as "first"/"second" or begins a sentence, or a
    /// duration.
    fn ordinal(&self, i: usize, tok: Tok, part: Part) -> Number {
        let before = self.spaced_before(i);
        let after_article = matches!(before, Tok::A | Tok::An);
        // "a thirty second clip": a duration, not the 32nd.
        if let Tok::Tens(n) = tok
            && part.end == i + 2
            && self.words[i + 1].tok == Tok::OrdUnit(2)
            && after_article
        {
            return Number {
                end: i + 1,
                text: n.to_string(),
                keep: false,
            };
        }
        let single = part.end == i + 1;
        let keep = single
            && (matches!(tok, Tok::OrdUnit(1 | 2))
                || self.starts_sentence[i]
                || after_article
                || matches!(
                    before,
                    Tok::Zero
                        | Tok::Unit(_)
                        | Tok::Teen(_)
                        | Tok::Tens(_)
                        | Tok::Hundred
                        | Tok::Scale(_)
                ));
        Number {
            end: part.end,
            text: format!("{}{}", part.value, ordinal_suffix(part.value)),
            keep,
        }
    }

    /// The cardinal `part` starting at word `i`, with the decimals and percent sign that follow
    /// it; a lone one to nine stays a word.
    fn cardinal_number(&self, i: usize, part: Part) -> Number {
        let mut text = part.value.to_string();
        let mut end = part.end;
        let mut plain = true;
        if let Some((digits, after)) = self.decimals(end) {
            text.push('.');
            text.push_str(&digits);
            end = after;
            plain = false;
        }
        if let Some(after) = self.percent(end) {
            text.push('%');
            end = after;
            plain = false;
        }
        let keep = plain && end == i + 1 && (1..=9).contains(&part.value);
        Number { end, text, keep }
    }

    /// "point" at word `k` and the digits after it: the digits and the index of the word after
    /// them.
    fn decimals(&self, k: usize) -> Option<(String, usize)> {
        if self.spaced(k) != Tok::Point {
            return None;
        }
        let mut j = k + 1;
        let mut digits = String::new();
        loop {
            match self.spaced(j) {
                Tok::Zero | Tok::Oh => digits.push('0'),
                Tok::Unit(u) => digits.push(char::from(b'0' + u as u8)),
                _ => break,
            }
            j += 1;
        }
        (!digits.is_empty()).then_some((digits, j))
    }

    /// "percent" or "per cent" at word `k`: the index of the word after it.
    fn percent(&self, k: usize) -> Option<usize> {
        match self.spaced(k) {
            Tok::Percent => Some(k + 1),
            Tok::Per if self.spaced(k + 1) == Tok::Cent => Some(k + 2),
            _ => None,
        }
    }
}
