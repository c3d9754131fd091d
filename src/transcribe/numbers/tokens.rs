//! The vocabulary: which number word (or helper word such as "and", "point", "percent") a
//! word of the text is.

/// One word of the text as far as number parsing is concerned.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Tok {
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

/// Longest number word: "seventeenth".
const MAX_WORD_LEN: usize = 11;

/// The token of one word (any letter case).
pub(super) fn classify(word: &str) -> Tok {
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
