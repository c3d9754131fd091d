//! Word error rate of a transcript against the text that was spoken (the corpus's references):
//! words compared lower-case with punctuation dropped, hyphenated words as their parts, spoken
//! titles spelt out and a lone digit word as its digit (as OpenAI's English text normaliser
//! does: "Eight of spades" and "8 of spades" are the same words), errors counted as the
//! fewest substitutions, insertions and deletions (Levenshtein distance over words).

/// Titles written short, and how they are said.
const TITLES: &[(&str, &str)] = &[("mr", "mister"), ("mrs", "missus"), ("dr", "doctor")];

/// The digit words, in order: `normalize_numbers` leaves one to nine spelled out on their own,
/// as style guides ask, so "eight" and "8" must be made the same here.
const DIGITS: [&str; 10] = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
];

/// The words of `text` as compared: lower-case letters and digits, punctuation dropped,
/// `ill-disposed` as `ill disposed`, `Mr.` as `mister`, `eight` as `8`.
fn words(text: &str) -> Vec<String> {
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
    .collect()
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
        assert_eq!(word_errors("five five", "5 5"), (0, 2));
        assert_eq!(word_errors("five five", "5 6"), (1, 2));
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
}
