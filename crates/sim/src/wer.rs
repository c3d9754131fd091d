//! Word error rate of a transcript against the text that was spoken (the corpus's references):
//! words compared lower-case with punctuation dropped, hyphenated words as their parts, spoken
//! titles spelt out and a lone digit word as its digit (as OpenAI's English text normaliser
//! does: "Eight of spades" and "8 of spades" are the same words), digits said one after
//! another as one number (OpenAI's normaliser writes "two nine three four zero" as 29340, and
//! a transcript may write them so or spaced: "29340", "2 9 3 4 0" and "293 4 0" are the same
//! word), errors counted as the fewest substitutions, insertions and deletions (Levenshtein
//! distance over words).

/// Titles written short, and how they are said.
const TITLES: &[(&str, &str)] = &[("mr", "mister"), ("mrs", "missus"), ("dr", "doctor")];

/// The digit words, in order: `normalize_numbers` leaves one to nine spelled out on their own,
/// as style guides ask, so "eight" and "8" must be made the same here.
const DIGITS: [&str; 10] = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
];

/// The words of `text` as compared: lower-case letters and digits, punctuation dropped,
/// `ill-disposed` as `ill disposed`, `Mr.` as `mister`, `eight` as `8`, digit words next to
/// each other as one (`33-4692` and `33 4 6 92` as `334692`).
fn words(text: &str) -> Vec<String> {
    let mut joined: Vec<String> = Vec::new();
    for word in spoken_words(text) {
        match joined.last_mut() {
            Some(last) if is_digits(last) && is_digits(&word) => last.push_str(&word),
            _ => joined.push(word),
        }
    }
    joined
}

fn is_digits(word: &str) -> bool {
    word.bytes().all(|b| b.is_ascii_digit())
}

/// The words of `text` one by one, each as compared (see [`words`]).
fn spoken_words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| {
        c.is_whitespace() || matches!(c, '-' | '\u{2010}' | '\u{2013}' | '\u{2014}')
    })
    .map(|w| {
        let word: String = w
            .chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect();
        if let Some((_, said)) = TITLES.iter().find(|(short, _)| *short == word) {
            return said.to_string();
        }
        match DIGITS.iter().position(|digit| *digit == word) {
            Some(value) => value.to_string(),
            None => word,
        }
    })
    .filter(|w| !w.is_empty())
}

/// Word errors of `hypothesis` against `reference`, and the number of reference words.
pub fn word_errors(reference: &str, hypothesis: &str) -> (usize, usize) {
    let (r, h) = (words(reference), words(hypothesis));
    let mut row: Vec<usize> = (0..=h.len()).collect();
    for i in 1..=r.len() {
        let mut diagonal = row[0];
        row[0] = i;
        for j in 1..=h.len() {
            let above = row[j];
            row[j] = (diagonal + usize::from(r[i - 1] != h[j - 1]))
                .min(above + 1)
                .min(row[j - 1] + 1);
            diagonal = above;
        }
    }
    (row[h.len()], r.len())
}

/// Word errors per reference word (0 for an empty reference heard as nothing).
pub fn word_error_rate(reference: &str, hypothesis: &str) -> f64 {
    let (errors, words) = word_errors(reference, hypothesis);
    errors as f64 / words.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_substitutions_insertions_and_deletions_over_words() {
        assert_eq!(word_errors("Hello, world.", "hello world"), (0, 2));
        assert_eq!(word_errors("eight of spades", "8 of spades."), (0, 3));
        assert_eq!(word_errors("five red", "5 red"), (0, 2));
        assert_eq!(word_errors("five red", "6 red"), (1, 2));
        assert_eq!(word_errors("the red one", "the bed one"), (1, 3));
        assert_eq!(word_errors("the red one", "the red red one"), (1, 3));
        assert_eq!(word_errors("the red one", "red one"), (1, 3));
        assert_eq!(word_errors("", ""), (0, 0));
        assert_eq!(word_error_rate("a b c d", ""), 1.0);
        assert_eq!(
            word_errors("an ill disposed young man", "an ill-disposed young man"),
            (0, 5)
        );
        assert_eq!(word_errors("and mister john", "And Mr. John"), (0, 3));
    }

    #[test]
    fn digits_said_one_after_another_are_one_number_however_they_are_spaced() {
        assert_eq!(word_errors("two nine three four zero", "29340."), (0, 1));
        assert_eq!(word_errors("2 9 3 4 0", "293 4 0"), (0, 1));
        assert_eq!(word_errors("33 4 6 92", "33-4692"), (0, 1));
        assert_eq!(
            word_errors("five five eight of spades", "5 5 8 of spades"),
            (0, 3)
        );
        assert_eq!(word_errors("two nine three four zero", "2 9 3 4 1"), (1, 1));
        assert_eq!(
            word_errors("10 of clubs four queen", "10 of clubs 4 queen"),
            (0, 5)
        );
    }
}
