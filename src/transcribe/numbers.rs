//! Spoken English numbers in a transcript become digits ("twenty five" -> "25", "third" -> "3rd",
//! "fifty percent" -> "50%"), in one linear pass; the exact rules are listed on
//! [`normalize_numbers`]. A lone cardinal from one to nine stays spelled out, as style guides ask.

use super::words::{is_apostrophe, is_word_char};

/// One word of the text as far as number parsing is concerned.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tok {
    Zero,
    /// one..nine
    Unit(u64),
    /// ten..nineteen
    Teen(u64),
    /// twenty, thirty, ..., ninety
    Tens(u64),
    Hundred,
    /// thousand, million, billion, trillion
    Scale(u64),
    OrdUnit(u64),
    OrdTeen(u64),
    OrdTens(u64),
    OrdHundred,
    OrdScale(u64),
    /// twenties..nineties, only used for decades ("nineteen nineties")
    TensPlural(u64),
    /// "hundreds", only used for centuries ("eighteen hundreds")
    Hundreds,
    A,
    An,
    And,
    Point,
    Oh,
    Percent,
    Per,
    Cent,
    Other,
}

/// What separates two neighbouring words.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Gap {
    /// Horizontal whitespace only (no line break).
    Space,
    /// A single hyphen, as in "twenty-five".
    Hyphen,
    Other,
}

#[derive(Clone, Copy, Debug)]
struct Word {
    start: usize,
    end: usize,
    tok: Tok,
}

/// A parsed stretch of number words: `end` is the index of the first word after it.
#[derive(Clone, Copy, Debug)]
struct Part {
    value: u64,
    end: usize,
    ordinal: bool,
}

/// A recognised number ready to be written out.
#[derive(Debug)]
struct Number {
    end: usize,
    text: String,
    /// Kept as written (small standalone number, fraction, "first"/"second").
    keep: bool,
}

/// Rewrites spoken English numbers in `text` as digits and leaves everything else untouched.
///
/// Rules:
/// - Words are maximal runs of Unicode letters, digits, `_` and combining marks; an apostrophe
///   (`'` or `’`) between two such characters stays inside the word. Only whole words that are
///   number words (any letter case) are considered, so "someone", "often", "tenant",
///   "ninetyish" and "ninety's" never change. Digits already present are left as they are.
/// - Words of one number must be separated by spaces or tabs (a line break ends a number);
///   a tens word and a unit may also be joined by a hyphen ("forty-two", "twenty-first").
/// - Cardinals: "one hundred and three" -> "103", "two thousand and six" -> "2006",
///   "three million four hundred thousand" -> "3400000", "twenty five hundred" -> "2500",
///   "zero" -> "0". "a" counts as one only directly before "hundred" or "thousand"
///   ("a hundred" -> "100"); "a" on its own never changes. No thousands separators are written.
/// - Years: a first group of thirteen..twenty directly followed by a two-digit group
///   ("ten".."ninety nine", or "oh" and a unit) reads as a year: "nineteen ninety nine" -> "1999",
///   "twenty twenty four" -> "2024", "nineteen oh five" -> "1905". Eleven and twelve are left out
///   so that times such as "eleven fifty" are not read as years. Decades and centuries work the
///   same way: "nineteen nineties" -> "1990s", "eighteen hundreds" -> "1800s"; a lone
///   "nineties" or "hundreds" stays a word.
/// - Ordinals: "twenty first" -> "21st", "third" -> "3rd", "one hundredth" -> "100th".
///   A lone "first" or "second" stays a word ("at first", "wait a second"), as does a lone
///   ordinal after "a", "an" or a number word, which reads as a fraction ("a third",
///   "one fifth"). After "a"/"an", a tens word followed by "second" is a duration:
///   "a thirty second clip" -> "a 30 second clip".
/// - Decimals and percentages: "three point one four" -> "3.14" (digits after "point" are
///   "zero", "oh" or one..nine), "fifty percent" / "fifty per cent" -> "50%".
/// - Small numbers: a cardinal made of a single word from "one" to "nine" stays spelled out
///   ("I have two cats", "one of them", "no one"); zero, numbers from ten up, compounds
///   ("two hundred"), decimals, percentages, ordinals and years become digits.
///
/// Runs in time linear in the length of `text` and never panics.
pub fn normalize_numbers(text: &str) -> String {
    let words = split_words(text);
    if !words.iter().any(|w| w.tok != Tok::Other) {
        return text.to_string();
    }
    let gaps: Vec<Gap> = words
        .windows(2)
        .map(|pair| classify_gap(&text[pair[0].end..pair[1].start]))
        .collect();
    let parser = Parser {
        words: &words,
        gaps: &gaps,
    };

    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < words.len() {
        match parser.number_at(i) {
            Some(number) => {
                if !number.keep {
                    out.push_str(&text[copied..words[i].start]);
                    out.push_str(&number.text);
                    copied = words[number.end - 1].end;
                }
                i = number.end;
            }
            None => i += 1,
        }
    }
    out.push_str(&text[copied..]);
    out
}

fn split_words(text: &str) -> Vec<Word> {
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

fn classify_gap(gap: &str) -> Gap {
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

/// Longest number word: "seventeenth".
const MAX_WORD_LEN: usize = 11;

fn classify(word: &str) -> Tok {
    if word.len() > MAX_WORD_LEN || !word.is_ascii() {
        return Tok::Other;
    }
    let mut buf = [0u8; MAX_WORD_LEN];
    let buf = &mut buf[..word.len()];
    buf.copy_from_slice(word.as_bytes());
    buf.make_ascii_lowercase();
    let Ok(lower) = std::str::from_utf8(buf) else {
        return Tok::Other;
    };
    match lower {
        "zero" => Tok::Zero,
        "one" => Tok::Unit(1),
        "two" => Tok::Unit(2),
        "three" => Tok::Unit(3),
        "four" => Tok::Unit(4),
        "five" => Tok::Unit(5),
        "six" => Tok::Unit(6),
        "seven" => Tok::Unit(7),
        "eight" => Tok::Unit(8),
        "nine" => Tok::Unit(9),
        "ten" => Tok::Teen(10),
        "eleven" => Tok::Teen(11),
        "twelve" => Tok::Teen(12),
        "thirteen" => Tok::Teen(13),
        "fourteen" => Tok::Teen(14),
        "fifteen" => Tok::Teen(15),
        "sixteen" => Tok::Teen(16),
        "seventeen" => Tok::Teen(17),
        "eighteen" => Tok::Teen(18),
        "nineteen" => Tok::Teen(19),
        "twenty" => Tok::Tens(20),
        "thirty" => Tok::Tens(30),
        "forty" => Tok::Tens(40),
        "fifty" => Tok::Tens(50),
        "sixty" => Tok::Tens(60),
        "seventy" => Tok::Tens(70),
        "eighty" => Tok::Tens(80),
        "ninety" => Tok::Tens(90),
        "hundred" => Tok::Hundred,
        "thousand" => Tok::Scale(1_000),
        "million" => Tok::Scale(1_000_000),
        "billion" => Tok::Scale(1_000_000_000),
        "trillion" => Tok::Scale(1_000_000_000_000),
        "first" => Tok::OrdUnit(1),
        "second" => Tok::OrdUnit(2),
        "third" => Tok::OrdUnit(3),
        "fourth" => Tok::OrdUnit(4),
        "fifth" => Tok::OrdUnit(5),
        "sixth" => Tok::OrdUnit(6),
        "seventh" => Tok::OrdUnit(7),
        "eighth" => Tok::OrdUnit(8),
        "ninth" => Tok::OrdUnit(9),
        "tenth" => Tok::OrdTeen(10),
        "eleventh" => Tok::OrdTeen(11),
        "twelfth" => Tok::OrdTeen(12),
        "thirteenth" => Tok::OrdTeen(13),
        "fourteenth" => Tok::OrdTeen(14),
        "fifteenth" => Tok::OrdTeen(15),
        "sixteenth" => Tok::OrdTeen(16),
        "seventeenth" => Tok::OrdTeen(17),
        "eighteenth" => Tok::OrdTeen(18),
        "nineteenth" => Tok::OrdTeen(19),
        "twentieth" => Tok::OrdTens(20),
        "thirtieth" => Tok::OrdTens(30),
        "fortieth" => Tok::OrdTens(40),
        "fiftieth" => Tok::OrdTens(50),
        "sixtieth" => Tok::OrdTens(60),
        "seventieth" => Tok::OrdTens(70),
        "eightieth" => Tok::OrdTens(80),
        "ninetieth" => Tok::OrdTens(90),
        "hundredth" => Tok::OrdHundred,
        "thousandth" => Tok::OrdScale(1_000),
        "millionth" => Tok::OrdScale(1_000_000),
        "billionth" => Tok::OrdScale(1_000_000_000),
        "trillionth" => Tok::OrdScale(1_000_000_000_000),
        "twenties" => Tok::TensPlural(20),
        "thirties" => Tok::TensPlural(30),
        "forties" => Tok::TensPlural(40),
        "fifties" => Tok::TensPlural(50),
        "sixties" => Tok::TensPlural(60),
        "seventies" => Tok::TensPlural(70),
        "eighties" => Tok::TensPlural(80),
        "nineties" => Tok::TensPlural(90),
        "hundreds" => Tok::Hundreds,
        "a" => Tok::A,
        "an" => Tok::An,
        "and" => Tok::And,
        "point" => Tok::Point,
        "oh" => Tok::Oh,
        "percent" => Tok::Percent,
        "per" => Tok::Per,
        "cent" => Tok::Cent,
        _ => Tok::Other,
    }
}

fn ordinal_suffix(value: u64) -> &'static str {
    match (value % 10, value % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

struct Parser<'a> {
    words: &'a [Word],
    /// `gaps[i]` separates `words[i]` from `words[i + 1]`.
    gaps: &'a [Gap],
}

impl Parser<'_> {
    /// The token of word `i` if it follows word `i - 1` across spaces, else `Other`.
    fn spaced(&self, i: usize) -> Tok {
        self.after(i, |gap| gap == Gap::Space)
    }

    /// Like [`Self::spaced`], but a hyphen also joins.
    fn joined(&self, i: usize) -> Tok {
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
    fn spaced_before(&self, i: usize) -> Tok {
        match i.checked_sub(1) {
            Some(p) if self.gaps.get(p) == Some(&Gap::Space) => self.words[p].tok,
            _ => Tok::Other,
        }
    }

    /// Numbers below one hundred: "seven", "thirteen", "forty", "forty-two", "twenty first".
    fn tens_part(&self, i: usize, tok: Tok) -> Option<Part> {
        let part = |value, end, ordinal| {
            Some(Part {
                value,
                end,
                ordinal,
            })
        };
        match tok {
            Tok::Unit(n) | Tok::Teen(n) => part(n, i + 1, false),
            Tok::OrdUnit(n) | Tok::OrdTeen(n) | Tok::OrdTens(n) => part(n, i + 1, true),
            Tok::Tens(n) => match self.joined(i + 1) {
                Tok::Unit(u) => part(n + u, i + 2, false),
                Tok::OrdUnit(u) => part(n + u, i + 2, true),
                _ => part(n, i + 1, false),
            },
            _ => None,
        }
    }

    /// A group in front of a scale word: "three", "a hundred and five", "twenty five hundred".
    fn segment(&self, i: usize, tok: Tok, allow_a: bool) -> Option<Part> {
        let lead = if tok == Tok::A {
            if !allow_a {
                return None;
            }
            match self.spaced(i + 1) {
                Tok::Hundred => Part {
                    value: 1,
                    end: i + 1,
                    ordinal: false,
                },
                Tok::Scale(1_000) => {
                    return Some(Part {
                        value: 1,
                        end: i + 1,
                        ordinal: false,
                    });
                }
                _ => return None,
            }
        } else {
            let lead = self.tens_part(i, tok)?;
            if lead.ordinal {
                return Some(lead);
            }
            lead
        };
        let k = lead.end;
        match self.spaced(k) {
            Tok::OrdHundred => Some(Part {
                value: lead.value * 100,
                end: k + 1,
                ordinal: true,
            }),
            Tok::Hundred => {
                let mut part = Part {
                    value: lead.value * 100,
                    end: k + 1,
                    ordinal: false,
                };
                let (j, next) = match self.spaced(k + 1) {
                    Tok::And => (k + 2, self.spaced(k + 2)),
                    next => (k + 1, next),
                };
                if let Some(rest) = self.tens_part(j, next) {
                    part.value += rest.value;
                    part.end = rest.end;
                    part.ordinal = rest.ordinal;
                }
                Some(part)
            }
            _ => Some(lead),
        }
    }

    /// A whole cardinal or ordinal number starting at word `i`.
    fn cardinal(&self, i: usize, tok: Tok) -> Option<Part> {
        if tok == Tok::Zero {
            return Some(Part {
                value: 0,
                end: i + 1,
                ordinal: false,
            });
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
                return Some(Part {
                    value: total + seg.value,
                    end: seg.end,
                    ordinal: true,
                });
            }
            match self.spaced(seg.end) {
                next @ (Tok::Scale(s) | Tok::OrdScale(s))
                    if seg.value < 1_000 && s < last_scale =>
                {
                    total += seg.value * s;
                    if matches!(next, Tok::OrdScale(_)) {
                        return Some(Part {
                            value: total,
                            end: seg.end + 1,
                            ordinal: true,
                        });
                    }
                    last_scale = s;
                    k = seg.end + 1;
                    first = false;
                    if self.spaced(k) == Tok::And {
                        // "two thousand and six": the group after "and" ends the number.
                        if let Some(rest) = self.segment(k + 1, self.spaced(k + 1), false)
                            && rest.value < 1_000
                        {
                            return Some(Part {
                                value: total + rest.value,
                                end: rest.end,
                                ordinal: rest.ordinal,
                            });
                        }
                        break;
                    }
                    tok = self.spaced(k);
                    continue;
                }
                // A scale out of order ("three thousand two million"): end before this group.
                Tok::Scale(_) | Tok::OrdScale(_) if !first => break,
                _ => {}
            }
            return Some(Part {
                value: total + seg.value,
                end: seg.end,
                ordinal: false,
            });
        }
        (!first).then_some(Part {
            value: total,
            end: k,
            ordinal: false,
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

    /// The number starting at word `i`, if any.
    fn number_at(&self, i: usize) -> Option<Number> {
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
        let mut part = self.cardinal(i, tok)?;
        let before = self.spaced_before(i);
        let after_article = matches!(before, Tok::A | Tok::An);

        if part.ordinal {
            // "a thirty second clip": a duration, not the 32nd.
            if let Tok::Tens(n) = tok
                && part.end == i + 2
                && self.words[i + 1].tok == Tok::OrdUnit(2)
                && after_article
            {
                return Some(Number {
                    end: i + 1,
                    text: n.to_string(),
                    keep: false,
                });
            }
            let single = part.end == i + 1;
            let keep = single
                && (matches!(tok, Tok::OrdUnit(1 | 2))
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
            return Some(Number {
                end: part.end,
                text: format!("{}{}", part.value, ordinal_suffix(part.value)),
                keep,
            });
        }

        let mut text = part.value.to_string();
        let mut plain = true;
        if self.spaced(part.end) == Tok::Point {
            let mut j = part.end + 1;
            let mut digits = String::new();
            loop {
                match self.spaced(j) {
                    Tok::Zero | Tok::Oh => digits.push('0'),
                    Tok::Unit(u) => digits.push(char::from(b'0' + u as u8)),
                    _ => break,
                }
                j += 1;
            }
            if !digits.is_empty() {
                text.push('.');
                text.push_str(&digits);
                part.end = j;
                plain = false;
            }
        }
        match self.spaced(part.end) {
            Tok::Percent => {
                part.end += 1;
                text.push('%');
                plain = false;
            }
            Tok::Per if self.spaced(part.end + 1) == Tok::Cent => {
                part.end += 2;
                text.push('%');
                plain = false;
            }
            _ => {}
        }
        let keep = plain && part.end == i + 1 && (1..=9).contains(&part.value);
        Some(Number {
            end: part.end,
            text,
            keep,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn n(s: &str) -> String {
        normalize_numbers(s)
    }

    #[test]
    fn compound_cardinals() {
        assert_eq!(n("twenty five"), "25");
        assert_eq!(n("twenty-five"), "25");
        assert_eq!(n("one hundred and three"), "103");
        assert_eq!(n("one hundred three"), "103");
        assert_eq!(n("two thousand and six"), "2006");
        assert_eq!(n("three million four hundred thousand"), "3400000");
        assert_eq!(n("two hundred"), "200");
        assert_eq!(n("nine hundred ninety nine"), "999");
        assert_eq!(n("one thousand one hundred and eleven"), "1111");
        assert_eq!(n("twenty five hundred"), "2500");
        assert_eq!(n("nineteen hundred"), "1900");
        assert_eq!(n("one hundred and twenty five thousand"), "125000");
        assert_eq!(n("seven billion"), "7000000000");
        assert_eq!(
            n("nine hundred ninety nine trillion nine hundred ninety nine billion"),
            "999999000000000"
        );
        assert_eq!(n("one million and five"), "1000005");
        assert_eq!(n("two thousand and six hundred"), "2600");
    }

    #[test]
    fn zero_and_teens() {
        assert_eq!(n("zero"), "0");
        assert_eq!(n("ten"), "10");
        assert_eq!(n("eleven cats"), "11 cats");
        assert_eq!(n("nineteen"), "19");
        assert_eq!(n("ninety"), "90");
    }

    #[test]
    fn years() {
        assert_eq!(n("nineteen ninety nine"), "1999");
        assert_eq!(n("twenty twenty four"), "2024");
        assert_eq!(n("twenty twenty"), "2020");
        assert_eq!(n("twenty ten"), "2010");
        assert_eq!(n("nineteen oh five"), "1905");
        assert_eq!(n("in eighteen twelve"), "in 1812");
        assert_eq!(n("Born in nineteen eighty-four."), "Born in 1984.");
        assert_eq!(n("the nineteen nineties"), "the 1990s");
        assert_eq!(n("the eighteen hundreds"), "the 1800s");
        assert_eq!(n("the twenty twenties"), "the 2020s");
        assert_eq!(n("in her twenties"), "in her twenties");
        assert_eq!(n("the nineties"), "the nineties");
        assert_eq!(n("hundreds of people"), "hundreds of people");
        // Not years.
        assert_eq!(n("twenty one twenty two"), "21 22");
        assert_eq!(n("eleven fifty"), "11 50");
        assert_eq!(n("twelve thirty"), "12 30");
        assert_eq!(n("thirty forty"), "30 40");
        assert_eq!(n("twenty thousand"), "20000");
    }

    #[test]
    fn ordinals() {
        assert_eq!(n("twenty first"), "21st");
        assert_eq!(n("twenty-first"), "21st");
        assert_eq!(n("third"), "3rd");
        assert_eq!(n("one hundredth"), "100th");
        assert_eq!(n("the fourth time"), "the 4th time");
        assert_eq!(n("eleventh"), "11th");
        assert_eq!(n("twelfth"), "12th");
        assert_eq!(n("thirteenth"), "13th");
        assert_eq!(n("twentieth"), "20th");
        assert_eq!(n("forty second street"), "42nd street");
        assert_eq!(n("one hundred and first"), "101st");
        assert_eq!(n("one hundred twenty third"), "123rd");
        assert_eq!(n("two thousandth"), "2000th");
        assert_eq!(n("one millionth"), "1000000th");
        assert_eq!(n("May third"), "May 3rd");
    }

    #[test]
    fn ordinals_left_as_words() {
        assert_eq!(n("at first"), "at first");
        assert_eq!(n("First, we go."), "First, we go.");
        assert_eq!(n("wait a second"), "wait a second");
        assert_eq!(n("a third of the cake"), "a third of the cake");
        assert_eq!(n("an eighth"), "an eighth");
        assert_eq!(n("one fifth"), "one fifth");
        assert_eq!(n("a hundredth"), "a hundredth");
        assert_eq!(n("hundredth"), "hundredth");
        assert_eq!(n("a thirty second clip"), "a 30 second clip");
        assert_eq!(n("the thirty second clip"), "the 32nd clip");
    }

    #[test]
    fn percent_and_decimals() {
        assert_eq!(n("fifty percent"), "50%");
        assert_eq!(n("fifty per cent"), "50%");
        assert_eq!(n("five percent"), "5%");
        assert_eq!(n("one hundred percent sure"), "100% sure");
        assert_eq!(n("three point one four"), "3.14");
        assert_eq!(n("zero point five"), "0.5");
        assert_eq!(n("three point oh four"), "3.04");
        assert_eq!(n("two point five percent"), "2.5%");
        assert_eq!(n("twenty point plan"), "20 point plan");
        assert_eq!(n("a three point shot"), "a three point shot");
        assert_eq!(n("percent"), "percent");
    }

    #[test]
    fn keeps_case_and_punctuation_around() {
        assert_eq!(n("Twenty five apples."), "25 apples.");
        assert_eq!(n("It costs forty-two, not forty."), "It costs 42, not 40.");
        assert_eq!(n("(twelve)"), "(12)");
        assert_eq!(n("TWENTY FIVE"), "25");
        assert_eq!(n("\"Fifteen!\" she said"), "\"15!\" she said");
        assert_eq!(n("twenty-five-year-old"), "25-year-old");
        assert_eq!(n("ten-twenty"), "10-20");
        assert_eq!(n("  twenty   five  "), "  25  ");
        assert_eq!(n("twenty\tfive"), "25");
    }

    #[test]
    fn line_breaks_end_numbers() {
        assert_eq!(n("twenty\nfive"), "20\nfive");
        assert_eq!(n("twenty,five"), "20,five");
    }

    #[test]
    fn pronoun_one_and_small_numbers() {
        for s in [
            "one of them",
            "no one",
            "the one",
            "one day",
            "I have two cats",
            "one two three",
            "nine to five",
            "one-on-one",
        ] {
            assert_eq!(n(s), s);
        }
        assert_eq!(n("one hundred"), "100");
        assert_eq!(n("twenty one days"), "21 days");
        assert_eq!(n("ten eleven twelve"), "10 11 12");
    }

    #[test]
    fn article_a() {
        assert_eq!(n("a hundred"), "100");
        assert_eq!(n("A hundred people"), "100 people");
        assert_eq!(n("a hundred and one dalmatians"), "101 dalmatians");
        assert_eq!(n("a thousand"), "1000");
        assert_eq!(n("a hundred thousand"), "100000");
        assert_eq!(n("a"), "a");
        assert_eq!(n("a cat"), "a cat");
        assert_eq!(n("a million"), "a million");
        assert_eq!(n("two thousand a hundred"), "2000 100");
    }

    #[test]
    fn words_inside_words_never_change() {
        for s in [
            "someone",
            "often",
            "tenant",
            "ninetyish",
            "ninety's",
            "twenty_five",
            "fivefold",
            "hundreds",
            "thousands of",
            "seconds",
            "anyone",
            "oneself",
            "naïve one",
            "twentyfive",
            "oh well",
            "and",
            "point",
            "per cent",
            "hundred",
            "thousand",
        ] {
            assert_eq!(n(s), s);
        }
    }

    #[test]
    fn digits_stay() {
        assert_eq!(n("25 apples"), "25 apples");
        assert_eq!(n("5 hundred"), "5 hundred");
        assert_eq!(n("3.14"), "3.14");
        assert_eq!(n("twenty 5"), "20 5");
    }

    #[test]
    fn running_text() {
        assert_eq!(
            n(
                "I bought twenty five apples and three pears for fifty percent off on May twenty first."
            ),
            "I bought 25 apples and three pears for 50% off on May 21st."
        );
        assert_eq!(
            n("In twenty twenty four we had one hundred and three guests."),
            "In 2024 we had 103 guests."
        );
    }

    #[test]
    fn odd_sequences() {
        assert_eq!(n("three thousand two million"), "3000 2000000");
        assert_eq!(n("twenty five hundred thousand"), "2500 thousand");
        assert_eq!(n("one hundred and"), "100 and");
        assert_eq!(n("two thousand and cats"), "2000 and cats");
        assert_eq!(n("million billion"), "million billion");
        assert_eq!(n("twenty twenty twenty"), "2020 20");
    }

    #[test]
    fn unicode_and_empty() {
        assert_eq!(n(""), "");
        assert_eq!(n("日本 twenty five ü"), "日本 25 ü");
        assert_eq!(n("twenty’s"), "twenty’s");
        assert_eq!(n("’twenty’"), "’20’");
        assert_eq!(n("twenty\u{301} five"), "twenty\u{301} five");
    }

    #[test]
    fn long_input_is_fast() {
        let text = "twenty five and a hundred, one of them ".repeat(50_000);
        let start = std::time::Instant::now();
        let out = n(&text);
        assert!(start.elapsed().as_secs() < 10);
        assert_eq!(out, "25 and 100, one of them ".repeat(50_000));
        let worst = "one hundred and ".repeat(100_000);
        assert!(n(&worst).starts_with("101 hundred and 101 hundred"));
    }

    const UNITS: [&str; 10] = [
        "", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
    ];
    const TEENS: [&str; 10] = [
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
    ];
    const TENS: [&str; 10] = [
        "", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
    ];

    fn spell_below_hundred(v: u64, hyphen: bool) -> String {
        match v {
            0..=9 => UNITS[v as usize].to_string(),
            10..=19 => TEENS[v as usize - 10].to_string(),
            _ if v.is_multiple_of(10) => TENS[v as usize / 10].to_string(),
            _ => format!(
                "{}{}{}",
                TENS[v as usize / 10],
                if hyphen { "-" } else { " " },
                UNITS[v as usize % 10]
            ),
        }
    }

    fn spell_below_thousand(v: u64, and: bool, hyphen: bool) -> String {
        let (h, rest) = (v / 100, v % 100);
        match (h, rest) {
            (0, _) => spell_below_hundred(rest, hyphen),
            (_, 0) => format!("{} hundred", UNITS[h as usize]),
            _ => format!(
                "{} hundred {}{}",
                UNITS[h as usize],
                if and { "and " } else { "" },
                spell_below_hundred(rest, hyphen)
            ),
        }
    }

    /// Spells 1..10^15 in words, optionally British style ("and") and with hyphens.
    fn spell(mut v: u64, and: bool, hyphen: bool) -> String {
        const SCALES: [(u64, &str); 4] = [
            (1_000_000_000_000, "trillion"),
            (1_000_000_000, "billion"),
            (1_000_000, "million"),
            (1_000, "thousand"),
        ];
        let mut parts = Vec::new();
        for (scale, name) in SCALES {
            if v >= scale {
                parts.push(format!(
                    "{} {name}",
                    spell_below_thousand(v / scale, and, hyphen)
                ));
                v %= scale;
            }
        }
        if v > 0 {
            let tail = spell_below_thousand(v, and, hyphen);
            if and && !parts.is_empty() && v < 100 {
                parts.push(format!("and {tail}"));
            } else {
                parts.push(tail);
            }
        }
        parts.join(" ")
    }

    fn ordinal_word(word: &str) -> String {
        match word {
            "one" => "first".into(),
            "two" => "second".into(),
            "three" => "third".into(),
            "five" => "fifth".into(),
            "eight" => "eighth".into(),
            "nine" => "ninth".into(),
            "twelve" => "twelfth".into(),
            w if w.ends_with('y') => format!("{}ieth", &w[..w.len() - 1]),
            w => format!("{w}th"),
        }
    }

    #[test]
    fn spelled_numbers_round_trip_examples() {
        assert_eq!(spell(2006, true, false), "two thousand and six");
        assert_eq!(spell(103, true, false), "one hundred and three");
        assert_eq!(
            spell(3_400_000, false, false),
            "three million four hundred thousand"
        );
        for v in (10..5_000).chain([1_000_001, 999_999_999_999_999]) {
            assert_eq!(n(&spell(v, false, false)), v.to_string(), "{v}");
            assert_eq!(n(&spell(v, true, true)), v.to_string(), "{v}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn never_panics(s in any::<String>()) {
            let _ = normalize_numbers(&s);
        }

        #[test]
        fn never_panics_on_number_soup(
            words in proptest::collection::vec(
                prop_oneof![
                    Just("one"), Just("twenty"), Just("hundred"), Just("thousand"),
                    Just("and"), Just("a"), Just("point"), Just("oh"), Just("percent"),
                    Just("first"), Just("second"), Just("hundredth"), Just("million"),
                    Just("nineteen"), Just("per"), Just("cent"), Just("zero"), Just("x"),
                    Just("-"), Just(","), Just("\n"), Just("é"), Just("’"),
                ],
                0..60,
            ),
            seps in proptest::collection::vec(prop_oneof![Just(" "), Just(""), Just("-")], 60),
        ) {
            let text: String = words
                .iter()
                .zip(seps.iter())
                .flat_map(|(w, s)| [*w, *s])
                .collect();
            let _ = normalize_numbers(&text);
        }

        #[test]
        fn text_without_number_words_is_unchanged(s in "[b-df-hj-mp-rt-zB-DF-HJ-MP-RT-Z0-9 ,.!?'’\n-]{0,200}") {
            prop_assert_eq!(normalize_numbers(&s), s);
        }

        #[test]
        fn spelled_cardinals_become_digits(v in 10u64..1_000_000_000_000_000, and: bool, hyphen: bool) {
            let spoken = spell(v, and, hyphen);
            prop_assert_eq!(normalize_numbers(&spoken), v.to_string());
            let sentence = format!("We counted {spoken} birds.");
            prop_assert_eq!(normalize_numbers(&sentence), format!("We counted {v} birds."));
        }

        #[test]
        fn spelled_ordinals_become_digits(v in 3u64..1_000_000_000, hyphen: bool) {
            let spoken = spell(v, false, hyphen);
            let cut = spoken.rfind([' ', '-']).map_or(0, |p| p + 1);
            let ordinal = format!("{}{}", &spoken[..cut], ordinal_word(&spoken[cut..]));
            prop_assert_eq!(
                normalize_numbers(&ordinal),
                format!("{v}{}", ordinal_suffix(v))
            );
        }

        #[test]
        fn long_inputs_do_not_panic(s in "[a-z ]{0,50}", reps in 1usize..2_000) {
            let text = format!("{s} twenty ").repeat(reps);
            let _ = normalize_numbers(&text);
        }
    }
}
