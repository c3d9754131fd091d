//! User dictionary corrections ("eye phone" -> "iPhone") applied to a transcript in one pass,
//! on word boundaries, longest match first and without cascades; see [`apply_corrections`].

use super::words::{is_apostrophe, is_word_char};

/// The dictionary's correction type, which this module applies.
pub use crate::store::Correction;

/// Applies every correction on word boundaries; returns the corrected text.
///
/// Rules:
/// - Word characters are Unicode letters and digits, `_` and combining marks. An apostrophe
///   (`'` or `’`) with word characters on both sides is part of the word, so "cat" does not
///   match in "cat's", "o'cat" or "concatenate", but does match in "cat,", "(cat)", "'cat'"
///   and "cats'" (for "cats"). The two apostrophe forms match each other.
/// - The boundary test applies to each end of `original` that is a word character: such an
///   end must not touch a word character in the text. An end that is punctuation has no
///   boundary test ("C++" also matches in "C++17").
/// - Leading and trailing whitespace of `original` is ignored; an original that is empty or
///   only whitespace is skipped. Each run of whitespace inside it matches any run of
///   whitespace in the text (spaces, tabs, line breaks).
/// - `case_sensitive: false` compares characters after a per-character Unicode case fold
///   ("ÉCOLE" matches "école", "ΟΔΟΣ" matches "οδος"); expansions such as "ß" -> "ss" are not
///   applied, so "Straße" and "STRASSE" do not match.
/// - Where matches overlap, the longest wins (length counted in characters, a whitespace run
///   counting as one); then the one further left; then a case-sensitive correction over a
///   case-insensitive one; then the one earlier in `corrections`.
/// - All matches are found in the original text and replaced at once, so a replacement is
///   never matched again ("a" -> "b" and "b" -> "c" turn "a" into "b").
///
/// Complexity: building the two tries is O(P log σ) for P characters of originals; matching
/// is O(N · L · log σ) for N characters of text and L the longest original (each position
/// walks the tries at most L steps), plus sorting the M candidate matches, O(M log M).
/// There is no per-correction pass over the text.
pub fn apply_corrections(text: &str, corrections: &[Correction]) -> String {
    let mut exact = Trie::new();
    let mut folded = Trie::new();
    for (index, correction) in corrections.iter().enumerate() {
        let Some(last) = correction.original.trim().chars().last() else {
            continue;
        };
        let Ok(index) = u32::try_from(index) else {
            break;
        };
        let (trie, fold_case) = if correction.case_sensitive {
            (&mut exact, false)
        } else {
            (&mut folded, true)
        };
        trie.insert(
            &symbols(correction.original.trim(), fold_case),
            index,
            is_word_char(last),
        );
    }
    if exact.is_empty() && folded.is_empty() {
        return text.to_string();
    }

    let units = units(text);
    let mut candidates = Vec::new();
    for start in 0..units.len() {
        if units[start].word && !left_boundary(&units, start) {
            continue;
        }
        for (trie, insensitive) in [(&exact, false), (&folded, true)] {
            trie.collect(&units, start, insensitive, &mut candidates);
        }
    }

    // Longest first, then leftmost, then case-sensitive, then earliest correction.
    candidates.sort_unstable_by(|a, b| {
        (b.end - b.start)
            .cmp(&(a.end - a.start))
            .then(a.start.cmp(&b.start))
            .then(a.insensitive.cmp(&b.insensitive))
            .then(a.index.cmp(&b.index))
    });
    // Every accepted match is at least as long as the candidate at hand, so the two overlap
    // exactly when the accepted one covers the candidate's first or last unit.
    let mut covered = vec![false; units.len()];
    let mut chosen = Vec::new();
    for candidate in candidates {
        if covered[candidate.start] || covered[candidate.end - 1] {
            continue;
        }
        covered[candidate.start..candidate.end].fill(true);
        chosen.push(candidate);
    }
    if chosen.is_empty() {
        return text.to_string();
    }
    chosen.sort_unstable_by_key(|c| c.start);

    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for candidate in chosen {
        out.push_str(&text[copied..units[candidate.start].start]);
        out.push_str(&corrections[candidate.index as usize].replacement);
        copied = units[candidate.end - 1].end;
    }
    out.push_str(&text[copied..]);
    out
}

/// Symbol standing for a run of whitespace; never a valid `char`.
const WHITESPACE: u32 = u32::MAX;

fn single(mut chars: impl Iterator<Item = char>) -> Option<char> {
    let first = chars.next()?;
    chars.next().is_none().then_some(first)
}

/// Per-character case fold: lowercase of the uppercase, so that "ς", "σ" and "Σ" agree.
/// Characters whose case mapping needs several characters fold to themselves, and the
/// Turkish dotted/dotless i keep their identity.
fn fold(c: char) -> char {
    if c.is_ascii() {
        return c.to_ascii_lowercase();
    }
    if matches!(c, '\u{130}' | '\u{131}') {
        return c;
    }
    let upper = single(c.to_uppercase()).unwrap_or(c);
    single(upper.to_lowercase())
        .or_else(|| single(c.to_lowercase()))
        .unwrap_or(c)
}

fn symbol(c: char, fold_case: bool) -> u32 {
    let c = if c == '\u{2019}' { '\'' } else { c };
    u32::from(if fold_case { fold(c) } else { c })
}

/// The symbols of a trimmed original, whitespace runs collapsed.
fn symbols(original: &str, fold_case: bool) -> Vec<u32> {
    let mut out = Vec::with_capacity(original.len());
    for c in original.chars() {
        if c.is_whitespace() {
            if out.last() != Some(&WHITESPACE) {
                out.push(WHITESPACE);
            }
        } else {
            out.push(symbol(c, fold_case));
        }
    }
    out
}

/// One character of the text, or one whole run of whitespace.
struct Unit {
    start: usize,
    end: usize,
    exact: u32,
    folded: u32,
    word: bool,
    apostrophe: bool,
}

fn units(text: &str) -> Vec<Unit> {
    let mut units: Vec<Unit> = Vec::with_capacity(text.len());
    for (start, c) in text.char_indices() {
        let end = start + c.len_utf8();
        if c.is_whitespace() {
            if let Some(last) = units.last_mut()
                && last.exact == WHITESPACE
            {
                last.end = end;
                continue;
            }
            units.push(Unit {
                start,
                end,
                exact: WHITESPACE,
                folded: WHITESPACE,
                word: false,
                apostrophe: false,
            });
        } else {
            units.push(Unit {
                start,
                end,
                exact: symbol(c, false),
                folded: symbol(c, true),
                word: is_word_char(c),
                apostrophe: is_apostrophe(c),
            });
        }
    }
    units
}

/// True when the word character at `start` begins a word (nothing word-like just before it).
fn left_boundary(units: &[Unit], start: usize) -> bool {
    match start.checked_sub(1).map(|p| &units[p]) {
        None => true,
        Some(prev) if prev.word => false,
        Some(prev) if prev.apostrophe => !(start >= 2 && units[start - 2].word),
        Some(_) => true,
    }
}

/// True when the word character before `end` ends a word (nothing word-like right after it).
fn right_boundary(units: &[Unit], end: usize) -> bool {
    match units.get(end) {
        None => true,
        Some(next) if next.word => false,
        Some(next) if next.apostrophe => !units.get(end + 1).is_some_and(|u| u.word),
        Some(_) => true,
    }
}

/// A possible replacement of `units[start..end]` by correction `index`.
struct Candidate {
    start: usize,
    end: usize,
    insensitive: bool,
    index: u32,
}

#[derive(Default)]
struct Node {
    /// Sorted by symbol.
    children: Vec<(u32, u32)>,
    /// First correction ending here.
    terminal: Option<u32>,
    /// Whether the originals ending here end with a word character.
    ends_in_word: bool,
}

struct Trie {
    nodes: Vec<Node>,
}

impl Trie {
    fn new() -> Self {
        Trie {
            nodes: vec![Node::default()],
        }
    }

    fn is_empty(&self) -> bool {
        self.nodes[0].children.is_empty()
    }

    fn child(&self, node: u32, symbol: u32) -> Option<u32> {
        let children = &self.nodes[node as usize].children;
        children
            .binary_search_by_key(&symbol, |&(s, _)| s)
            .ok()
            .map(|i| children[i].1)
    }

    fn insert(&mut self, symbols: &[u32], index: u32, ends_in_word: bool) {
        let mut node = 0u32;
        for &symbol in symbols {
            let next = u32::try_from(self.nodes.len()).unwrap_or(u32::MAX);
            let children = &mut self.nodes[node as usize].children;
            node = match children.binary_search_by_key(&symbol, |&(s, _)| s) {
                Ok(i) => children[i].1,
                Err(i) => {
                    children.insert(i, (symbol, next));
                    self.nodes.push(Node::default());
                    next
                }
            };
        }
        let node = &mut self.nodes[node as usize];
        if node.terminal.is_none() {
            node.terminal = Some(index);
            node.ends_in_word = ends_in_word;
        }
    }

    /// Pushes every match of this trie that starts at `units[start]`.
    fn collect(&self, units: &[Unit], start: usize, insensitive: bool, out: &mut Vec<Candidate>) {
        if self.is_empty() {
            return;
        }
        let mut node = 0u32;
        for (end, unit) in units.iter().enumerate().skip(start) {
            let symbol = if insensitive { unit.folded } else { unit.exact };
            let Some(next) = self.child(node, symbol) else {
                return;
            };
            node = next;
            let n = &self.nodes[node as usize];
            if let Some(index) = n.terminal
                && (!n.ends_in_word || right_boundary(units, end + 1))
            {
                out.push(Candidate {
                    start,
                    end: end + 1,
                    insensitive,
                    index,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn c(original: &str, replacement: &str, case_sensitive: bool) -> Correction {
        Correction {
            original: original.into(),
            replacement: replacement.into(),
            case_sensitive,
        }
    }

    fn ci(original: &str, replacement: &str) -> Correction {
        c(original, replacement, false)
    }

    fn apply(text: &str, corrections: &[Correction]) -> String {
        apply_corrections(text, corrections)
    }

    #[test]
    fn word_boundaries() {
        let cat = [ci("cat", "dog")];
        assert_eq!(apply("cat", &cat), "dog");
        assert_eq!(apply("cat, cat.", &cat), "dog, dog.");
        assert_eq!(apply("(cat)", &cat), "(dog)");
        assert_eq!(apply("\"cat\" 'cat'", &cat), "\"dog\" 'dog'");
        assert_eq!(apply("concatenate", &cat), "concatenate");
        assert_eq!(apply("cats", &cat), "cats");
        assert_eq!(apply("bobcat", &cat), "bobcat");
        assert_eq!(apply("cat5 cat_x", &cat), "cat5 cat_x");
        assert_eq!(apply("cat-like", &cat), "dog-like");
        assert_eq!(apply("cat\u{301}", &cat), "cat\u{301}");
        assert_eq!(apply("écat catö", &cat), "écat catö");
    }

    #[test]
    fn apostrophes_inside_words() {
        let cat = [ci("cat", "dog")];
        assert_eq!(apply("cat's", &cat), "cat's");
        assert_eq!(apply("cat’s", &cat), "cat’s");
        assert_eq!(apply("o'cat", &cat), "o'cat");
        assert_eq!(apply("the cat' is", &cat), "the dog' is");
        assert_eq!(apply("'cat", &cat), "'dog");
        assert_eq!(apply("cats'", &[ci("cats", "dogs")]), "dogs'");
        assert_eq!(apply("cat's", &[ci("cat's", "dog's")]), "dog's");
        assert_eq!(apply("cat’s", &[ci("cat's", "dog's")]), "dog's");
        assert_eq!(apply("don't", &[c("dont", "do not", true)]), "don't");
    }

    #[test]
    fn multi_word_and_punctuation() {
        let list = [
            ci("eye phone", "iPhone"),
            ci("C plus plus", "C++"),
            ci("C++", "cpp"),
        ];
        assert_eq!(apply("my eye phone broke", &list), "my iPhone broke");
        assert_eq!(apply("Eye  Phone", &list), "iPhone");
        assert_eq!(apply("eye\n\tphone!", &list), "iPhone!");
        assert_eq!(apply("I write c plus plus.", &list), "I write C++.");
        assert_eq!(apply("C++ and C++17", &list), "cpp and cpp17");
        assert_eq!(apply("eyephone", &list), "eyephone");
        assert_eq!(apply("eye phones", &list), "eye phones");
        assert_eq!(apply("x.net y", &[ci(".net", "NET")]), "xNET y");
    }

    #[test]
    fn whitespace_in_original_is_normalised() {
        let list = [ci("  eye \t phone  ", "iPhone")];
        assert_eq!(apply("an eye phone", &list), "an iPhone");
        assert_eq!(apply("an eye\r\nphone", &list), "an iPhone");
    }

    #[test]
    fn case_handling() {
        let insensitive = [ci("straße", "street")];
        assert_eq!(apply("STRAẞE Straße", &insensitive), "street street");
        assert_eq!(apply("STRASSE", &insensitive), "STRASSE");
        assert_eq!(
            apply("ÉCOLE école", &[ci("école", "school")]),
            "school school"
        );
        assert_eq!(apply("ΟΔΟΣ", &[ci("οδος", "road")]), "road");
        assert_eq!(apply("οδος", &[ci("ΟΔΟΣ", "road")]), "road");

        let sensitive = [c("Bob", "Robert", true)];
        assert_eq!(apply("Bob bob BOB", &sensitive), "Robert bob BOB");
        let insensitive = [ci("bob", "Robert")];
        assert_eq!(apply("Bob bob BOB", &insensitive), "Robert Robert Robert");
    }

    #[test]
    fn case_sensitive_beats_insensitive_at_equal_length() {
        let list = [ci("us", "you all"), c("US", "United States", true)];
        assert_eq!(apply("US us Us", &list), "United States you all you all");
    }

    #[test]
    fn longest_wins() {
        let list = [
            ci("new", "NEW"),
            ci("new york", "New York"),
            ci("new york city", "NYC"),
        ];
        assert_eq!(apply("new york city", &list), "NYC");
        assert_eq!(apply("new york", &list), "New York");
        assert_eq!(apply("new yorker", &list), "NEW yorker");
        // A longer match starting later beats an overlapping shorter one starting earlier.
        let list = [ci("a b", "X"), ci("b c d", "Y")];
        assert_eq!(apply("a b c d", &list), "a Y");
        // Equal length: leftmost wins.
        let list = [ci("a b", "X"), ci("b c", "Y")];
        assert_eq!(apply("a b c", &list), "X c");
    }

    #[test]
    fn earlier_duplicate_wins() {
        let list = [ci("teh", "the"), ci("TEH", "tee")];
        assert_eq!(apply("teh", &list), "the");
    }

    #[test]
    fn no_cascades() {
        let list = [ci("a", "b"), ci("b", "c")];
        assert_eq!(apply("a", &list), "b");
        assert_eq!(apply("a b", &list), "b c");
        let list = [ci("foo", "foo foo")];
        assert_eq!(apply("foo", &list), "foo foo");
    }

    #[test]
    fn empty_originals_are_ignored() {
        let list = [ci("", "x"), ci("   ", "y"), ci("\t", "z")];
        assert_eq!(apply("a b  c", &list), "a b  c");
        assert_eq!(apply("", &list), "");
        assert_eq!(apply("", &[ci("a", "b")]), "");
    }

    #[test]
    fn replacement_may_be_empty() {
        assert_eq!(apply("um so um", &[ci("um", "")]), " so ");
    }

    #[test]
    fn unicode_text() {
        let list = [ci("東京", "Tokyo"), ci("naïve", "naive")];
        assert_eq!(apply("東京 と 東京都", &list), "Tokyo と 東京都");
        assert_eq!(apply("Naïve, NAÏVE!", &list), "naive, naive!");
        assert_eq!(apply("😀 cat 😀", &[ci("cat", "dog")]), "😀 dog 😀");
        assert_eq!(apply("a 😀 b", &[ci("😀", "smile")]), "a smile b");
        assert_eq!(apply("a😀b", &[ci("😀", "smile")]), "asmileb");
    }

    #[test]
    fn many_corrections_over_long_text() {
        let corrections: Vec<Correction> = (0..1_000)
            .map(|i| ci(&format!("word{i} phrase"), &format!("W{i}")))
            .collect();
        let text: String = (0..10_000)
            .map(|i| format!("word{} phrase filler ", i % 2_000))
            .collect();
        let start = std::time::Instant::now();
        let out = apply(&text, &corrections);
        assert!(start.elapsed().as_secs() < 10);
        assert!(out.starts_with("W0 filler W1 filler "));
        assert!(out.contains("word1999 phrase filler"));
        assert_eq!(out.matches(" filler").count(), 10_000);
    }

    #[test]
    fn repetitive_text_with_overlapping_corrections_matches_the_reference() {
        // The worst case for a matcher that backtracks: every position starts 49 candidates.
        let corrections: Vec<Correction> = (1..50).map(|k| ci(&"a ".repeat(k), "x")).collect();
        let text = "a ".repeat(1_000);
        let out = apply(&text, &corrections);
        assert!(out.starts_with("x x "));
        assert_eq!(out, reference(&text, &corrections));
    }

    /// Straightforward reference: try every correction at every position.
    fn reference(text: &str, corrections: &[Correction]) -> String {
        let units = units(text);
        let mut candidates = Vec::new();
        for (index, corr) in corrections.iter().enumerate() {
            let original = corr.original.trim();
            let Some(last) = original.chars().last() else {
                continue;
            };
            let first_word = original.chars().next().is_some_and(is_word_char);
            let syms = symbols(original, !corr.case_sensitive);
            for start in 0..units.len() {
                let end = start + syms.len();
                if end > units.len() {
                    break;
                }
                let matches = syms.iter().zip(&units[start..end]).all(|(&s, u)| {
                    s == if corr.case_sensitive {
                        u.exact
                    } else {
                        u.folded
                    }
                });
                if matches
                    && (!first_word || left_boundary(&units, start))
                    && (!is_word_char(last) || right_boundary(&units, end))
                {
                    candidates.push((end - start, start, corr.case_sensitive, index));
                }
            }
        }
        candidates.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then(a.1.cmp(&b.1))
                .then(b.2.cmp(&a.2))
                .then(a.3.cmp(&b.3))
        });
        let mut taken: Vec<(usize, usize, usize)> = Vec::new();
        for (len, start, _, index) in candidates {
            if taken
                .iter()
                .all(|&(s, e, _)| start + len <= s || e <= start)
            {
                taken.push((start, start + len, index));
            }
        }
        taken.sort();
        let mut out = String::new();
        let mut copied = 0;
        for (s, e, index) in taken {
            out.push_str(&text[copied..units[s].start]);
            out.push_str(&corrections[index].replacement);
            copied = units[e - 1].end;
        }
        out.push_str(&text[copied..]);
        out
    }

    fn correction_strategy(original: &'static str) -> impl Strategy<Value = Correction> {
        (original, "[A-Z0-9 ]{0,4}", any::<bool>()).prop_map(|(original, replacement, cs)| {
            Correction {
                original,
                replacement,
                case_sensitive: cs,
            }
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn never_panics(
            text in any::<String>(),
            corrections in proptest::collection::vec(
                (any::<String>(), any::<String>(), any::<bool>()).prop_map(|(o, r, cs)| Correction {
                    original: o,
                    replacement: r,
                    case_sensitive: cs,
                }),
                0..8,
            ),
        ) {
            let _ = apply_corrections(&text, &corrections);
        }

        #[test]
        fn no_corrections_is_identity(text in any::<String>()) {
            prop_assert_eq!(apply_corrections(&text, &[]), text);
        }

        #[test]
        fn no_match_is_identity(
            text in "[a-wA-W0-9 ,.'’!\n\t-]{0,200}",
            corrections in proptest::collection::vec(correction_strategy("[xyzXYZ]{1,3}( [a-z]{1,3})?"), 0..20),
        ) {
            prop_assert_eq!(apply_corrections(&text, &corrections), text);
        }

        #[test]
        fn identity_replacements_are_identity(
            text in "[abAB ,'.-]{0,80}",
            originals in proptest::collection::vec("[abAB,'.-]{1,4}", 0..10),
        ) {
            let corrections: Vec<Correction> = originals
                .into_iter()
                .map(|o| Correction { replacement: o.clone(), original: o, case_sensitive: true })
                .collect();
            prop_assert_eq!(apply_corrections(&text, &corrections), text);
        }

        #[test]
        fn matches_reference(
            text in "[abAB ,'’é\u{301}\n-]{0,60}",
            corrections in proptest::collection::vec(correction_strategy("[abAB ,'’é-]{0,6}"), 0..12),
        ) {
            prop_assert_eq!(apply_corrections(&text, &corrections), reference(&text, &corrections));
        }

        #[test]
        fn long_arbitrary_inputs(
            chunk in "\\PC{0,40}",
            reps in 1usize..500,
            corrections in proptest::collection::vec(correction_strategy("\\PC{1,6}"), 1..30),
        ) {
            let text = chunk.repeat(reps);
            let _ = apply_corrections(&text, &corrections);
        }
    }
}
