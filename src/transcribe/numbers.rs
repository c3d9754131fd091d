//! Spoken English numbers in a transcript become digits ("twenty five" -> "25", "third" -> "3rd",
//! "fifty percent" -> "50%"), in one linear pass; the exact rules are listed on
//! [`normalize_numbers`]. A lone cardinal from one to nine stays spelled out, as style guides ask.

mod forms;
mod parser;
mod split;
mod tokens;

use parser::Parser;
use split::{Gap, classify_gap, split_words};
use tokens::Tok;

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
///   "one fifth"), and one that begins a sentence, which no numeral should ("First, …
///   Third, …", "Tenth place went to …"); "Twenty first, …" becomes "21st, …". After "a"/"an", a tens word followed by "second" is a duration:
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
    let starts_sentence: Vec<bool> = words
        .iter()
        .enumerate()
        .map(|(i, word)| match i.checked_sub(1) {
            None => !text[..word.start].chars().any(char::is_alphanumeric),
            Some(p) => text[words[p].end..word.start].contains(['.', '!', '?']),
        })
        .collect();
    let parser = Parser {
        words: &words,
        gaps: &gaps,
        starts_sentence: &starts_sentence,
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

#[cfg(test)]
mod tests;
