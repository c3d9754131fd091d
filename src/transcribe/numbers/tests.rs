use proptest::prelude::*;

use super::forms::ordinal_suffix;
use super::*;

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
    assert_eq!(n("the third"), "the 3rd");
    assert_eq!(n("one hundredth"), "100th");
    assert_eq!(n("the fourth time"), "the 4th time");
    assert_eq!(n("the eleventh"), "the 11th");
    assert_eq!(n("the twelfth"), "the 12th");
    assert_eq!(n("the thirteenth"), "the 13th");
    assert_eq!(n("the twentieth"), "the 20th");
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
    // A lone ordinal that begins a sentence stays a word, as "First," does.
    assert_eq!(
        n("First, we plan. Second, we build. Third, we ship!"),
        "First, we plan. Second, we build. Third, we ship!"
    );
    assert_eq!(n("Third, the report."), "Third, the report.");
    assert_eq!(
        n("Tenth place. Then the third."),
        "Tenth place. Then the 3rd."
    );
    assert_eq!(n("Twenty first, the party."), "21st, the party.");
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
        n("I bought twenty five apples and three pears for fifty percent off on May twenty first."),
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
