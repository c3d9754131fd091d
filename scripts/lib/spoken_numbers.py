"""Spoken English numbers to digits, a line-by-line port of Verbatim's `normalize_numbers`
(src/transcribe/numbers), and the word error rate the project's measurements use.

Both sides of a comparison go through the same normaliser, so "twenty five apples" in a reference
and "25 apples" in a transcript count as the same words, as they do in the Rust examples and tests.
The rules (cardinals, years, ordinals, decimals, percentages, one to nine kept as words) are those
documented on `normalize_numbers`; see that function for the full list. Running this file checks
the port against the cases of the Rust unit tests (`python3 scripts/lib/spoken_numbers.py`).
"""

import re

import unicodedata

# Token kinds of one word, as in src/transcribe/numbers/tokens.rs.
ZERO, UNIT, TEEN, TENS, HUNDRED, SCALE = "zero", "unit", "teen", "tens", "hundred", "scale"
ORD_UNIT, ORD_TEEN, ORD_TENS, ORD_HUNDRED, ORD_SCALE = (
    "ord_unit", "ord_teen", "ord_tens", "ord_hundred", "ord_scale")
TENS_PLURAL, HUNDREDS = "tens_plural", "hundreds"
A, AN, AND, POINT, OH, PERCENT, PER, CENT, OTHER = (
    "a", "an", "and", "point", "oh", "percent", "per", "cent", "other")

_UNITS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_TEENS = ["ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
          "eighteen", "nineteen"]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_ORD_UNITS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"]
_ORD_TEENS = ["tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth",
              "sixteenth", "seventeenth", "eighteenth", "nineteenth"]
_ORD_TENS = ["twentieth", "thirtieth", "fortieth", "fiftieth", "sixtieth", "seventieth",
             "eightieth", "ninetieth"]
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12}

_VOCABULARY = {"zero": (ZERO, 0), "hundred": (HUNDRED, 100), "hundredth": (ORD_HUNDRED, 100),
               "hundreds": (HUNDREDS, 100)}
_VOCABULARY.update({w: (UNIT, n) for n, w in enumerate(_UNITS, 1)})
_VOCABULARY.update({w: (TEEN, n) for n, w in enumerate(_TEENS, 10)})
_VOCABULARY.update({w: (TENS, 10 * n) for n, w in enumerate(_TENS, 2)})
_VOCABULARY.update({w: (ORD_UNIT, n) for n, w in enumerate(_ORD_UNITS, 1)})
_VOCABULARY.update({w: (ORD_TEEN, n) for n, w in enumerate(_ORD_TEENS, 10)})
_VOCABULARY.update({w: (ORD_TENS, 10 * n) for n, w in enumerate(_ORD_TENS, 2)})
_VOCABULARY.update({w: (SCALE, s) for w, s in _SCALES.items()})
_VOCABULARY.update({w + "th": (ORD_SCALE, s) for w, s in _SCALES.items()})
_VOCABULARY.update({w[:-1] + "ies": (TENS_PLURAL, 10 * n) for n, w in enumerate(_TENS, 2)})
_VOCABULARY.update({w: (w, 0) for w in (A, AN, AND, POINT, OH, PERCENT, PER, CENT)})

_OTHER = (OTHER, 0)
SPACE, HYPHEN = "space", "hyphen"


def classify(word):
    """The token (kind, value) of one word, any letter case."""
    if not word.isascii():
        return _OTHER
    return _VOCABULARY.get(word.lower(), _OTHER)


def _is_word_char(c):
    return c.isalnum() or c == "_" or unicodedata.category(c) == "Mn"


def split_words(text):
    """(start, end) of every word: runs of word characters, an inner apostrophe kept inside."""
    words, start = [], None
    for i, c in enumerate(text):
        if _is_word_char(c):
            if start is None:
                start = i
            continue
        if start is not None:
            inner = c in "'\u2019" and i + 1 < len(text) and _is_word_char(text[i + 1])
            if inner:
                continue
            words.append((start, i))
            start = None
    if start is not None:
        words.append((start, len(text)))
    return words


def classify_gap(gap):
    if gap in ("-", "\u2010"):
        return HYPHEN
    vertical = "\n\r\x0b\x0c\x85\u2028\u2029"
    if gap and all(c.isspace() and c not in vertical for c in gap):
        return SPACE
    return OTHER


class _Parser:
    """src/transcribe/numbers/parser.rs and forms.rs: parts are (value, end, ordinal)."""

    def __init__(self, toks, gaps):
        self.toks, self.gaps = toks, gaps

    def _after(self, i, accept):
        if 1 <= i < len(self.toks) and i - 1 < len(self.gaps) and accept(self.gaps[i - 1]):
            return self.toks[i]
        return _OTHER

    def spaced(self, i):
        return self._after(i, lambda gap: gap == SPACE)

    def joined(self, i):
        return self._after(i, lambda gap: gap != OTHER)

    def spaced_before(self, i):
        if i >= 1 and self.gaps[i - 1] == SPACE:
            return self.toks[i - 1]
        return _OTHER

    def tens_part(self, i, tok):
        kind, n = tok
        if kind in (UNIT, TEEN):
            return (n, i + 1, False)
        if kind in (ORD_UNIT, ORD_TEEN, ORD_TENS):
            return (n, i + 1, True)
        if kind == TENS:
            nxt_kind, u = self.joined(i + 1)
            if nxt_kind == UNIT:
                return (n + u, i + 2, False)
            if nxt_kind == ORD_UNIT:
                return (n + u, i + 2, True)
            return (n, i + 1, False)
        return None

    def segment(self, i, tok, allow_a):
        if tok[0] == A:
            if not allow_a:
                return None
            nxt = self.spaced(i + 1)
            if nxt[0] == HUNDRED:
                lead = (1, i + 1, False)
            elif nxt == (SCALE, 1000):
                return (1, i + 1, False)
            else:
                return None
        else:
            lead = self.tens_part(i, tok)
            if lead is None or lead[2]:
                return lead
        return self.hundreds(lead)

    def hundreds(self, lead):
        value, k, _ = lead
        kind = self.spaced(k)[0]
        if kind == ORD_HUNDRED:
            return (value * 100, k + 1, True)
        if kind != HUNDRED:
            return lead
        part = (value * 100, k + 1, False)
        if self.spaced(k + 1)[0] == AND:
            j, nxt = k + 2, self.spaced(k + 2)
        else:
            j, nxt = k + 1, self.spaced(k + 1)
        rest = self.tens_part(j, nxt)
        if rest is not None:
            part = (part[0] + rest[0], rest[1], rest[2])
        return part

    def cardinal(self, i, tok):
        if tok[0] == ZERO:
            return (0, i + 1, False)
        total, last_scale, k, first = 0, float("inf"), i, True
        while True:
            seg = self.segment(k, tok, first)
            if seg is None or (not first and seg[0] >= 1000):
                break
            if seg[2]:
                return (total + seg[0], seg[1], True)
            nxt_kind, scale = self.spaced(seg[1])
            if nxt_kind in (SCALE, ORD_SCALE):
                if seg[0] < 1000 and scale < last_scale:
                    total += seg[0] * scale
                    if nxt_kind == ORD_SCALE:
                        return (total, seg[1] + 1, True)
                    last_scale, k, first = scale, seg[1] + 1, False
                    if self.spaced(k)[0] == AND:
                        return self.after_and(k, total)
                    tok = self.spaced(k)
                    continue
                if not first:
                    break
            return (total + seg[0], seg[1], False)
        return None if first else (total, k, False)

    def after_and(self, k, total):
        rest = self.segment(k + 1, self.spaced(k + 1), False)
        if rest is not None and rest[0] < 1000:
            return (total + rest[0], rest[1], rest[2])
        return (total, k, False)

    def number_at(self, i):
        """(end, text, keep) of the number starting at word i, or None."""
        tok = self.toks[i]
        if tok[0] not in (ZERO, UNIT, TEEN, TENS, ORD_UNIT, ORD_TEEN, ORD_TENS, A):
            return None
        year = self.year(i, tok)
        if year is not None:
            return (year[1], year[0], False)
        part = self.cardinal(i, tok)
        if part is None:
            return None
        return self.ordinal(i, tok, part) if part[2] else self.cardinal_number(i, part)

    def year(self, i, tok):
        kind, n = tok
        if kind == TEEN and n >= 13:
            high = n
        elif tok == (TENS, 20):
            high = 20
        else:
            return None
        nxt_kind, m = self.spaced(i + 1)
        if nxt_kind == TENS_PLURAL:
            return (f"{high * 100 + m}s", i + 2)
        if nxt_kind == HUNDREDS:
            return (f"{high * 100}s", i + 2)
        if nxt_kind == TEEN:
            low, end = m, i + 2
        elif nxt_kind == TENS:
            unit_kind, u = self.joined(i + 2)
            if unit_kind == UNIT:
                low, end = m + u, i + 3
            elif unit_kind == ORD_UNIT:
                return None
            else:
                low, end = m, i + 2
        elif nxt_kind == OH:
            unit_kind, u = self.spaced(i + 2)
            if unit_kind != UNIT:
                return None
            low, end = u, i + 3
        else:
            return None
        if self.spaced(end)[0] in (HUNDRED, ORD_HUNDRED, SCALE, ORD_SCALE):
            return None
        return (str(high * 100 + low), end)

    def ordinal(self, i, tok, part):
        value, end, _ = part
        before = self.spaced_before(i)
        after_article = before[0] in (A, AN)
        if tok[0] == TENS and end == i + 2 and self.toks[i + 1] == (ORD_UNIT, 2) and after_article:
            return (i + 1, str(tok[1]), False)
        single = end == i + 1
        keep = single and (tok in ((ORD_UNIT, 1), (ORD_UNIT, 2)) or after_article
                           or before[0] in (ZERO, UNIT, TEEN, TENS, HUNDRED, SCALE))
        return (end, f"{value}{ordinal_suffix(value)}", keep)

    def cardinal_number(self, i, part):
        value, end, _ = part
        text, plain = str(value), True
        if self.spaced(end)[0] == POINT:
            j, digits = end + 1, ""
            while True:
                kind, u = self.spaced(j)
                if kind in (ZERO, OH):
                    digits += "0"
                elif kind == UNIT:
                    digits += str(u)
                else:
                    break
                j += 1
            if digits:
                text, end, plain = f"{text}.{digits}", j, False
        if self.spaced(end)[0] == PERCENT:
            text, end, plain = text + "%", end + 1, False
        elif self.spaced(end)[0] == PER and self.spaced(end + 1)[0] == CENT:
            text, end, plain = text + "%", end + 2, False
        keep = plain and end == i + 1 and 1 <= value <= 9
        return (end, text, keep)


def ordinal_suffix(value):
    if value % 100 in (11, 12, 13):
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(value % 10, "th")


def normalize_numbers(text):
    """Rewrites spoken English numbers in `text` as digits; everything else is left untouched."""
    words = split_words(text)
    toks = [classify(text[s:e]) for s, e in words]
    if all(tok[0] == OTHER for tok in toks):
        return text
    gaps = [classify_gap(text[a[1]:b[0]]) for a, b in zip(words, words[1:])]
    parser = _Parser(toks, gaps)
    out, copied, i = [], 0, 0
    while i < len(words):
        number = parser.number_at(i)
        if number is None:
            i += 1
            continue
        end, digits, keep = number
        if not keep:
            out.append(text[copied:words[i][0]])
            out.append(digits)
            copied = words[end - 1][1]
        i = end
    out.append(text[copied:])
    return "".join(out)


TITLES = {"mr": "mister", "mrs": "missus", "dr": "doctor"}
# normalize_numbers leaves one to nine spelled out on their own, so "eight" and "8" are made
# the same here.
DIGITS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine".split())}


def comparable_words(text):
    """Numbers normalised, then lower-case words with everything but letters and digits removed,
    hyphenated words as their parts, short titles spelt out, a lone digit word as its digit and
    digit words next to each other as one number (as OpenAI's English text normaliser does):
    `Mr. ill-disposed` compares as `mister ill disposed`, `Eight of spades` as `8 of spades`,
    `two nine three four zero`, `293 4 0` and `29340` as `29340` (crates/sim/src/wer.rs does the same)."""
    spaced = re.sub("[-\u2010\u2013\u2014]", " ", normalize_numbers(text))
    words = ("".join(c for c in w if c.isalnum()).lower() for w in spaced.split())
    joined = []
    for word in (DIGITS.get(w, TITLES.get(w, w)) for w in words if w):
        if joined and _is_digits(word) and _is_digits(joined[-1]):
            joined[-1] += word
        else:
            joined.append(word)
    return joined


def _is_digits(word):
    return word.isascii() and word.isdigit()


def word_errors(reference, hypothesis):
    """(substitutions + deletions + insertions, reference words) after `comparable_words`."""
    ref, hyp = comparable_words(reference), comparable_words(hypothesis)
    row = list(range(len(hyp) + 1))
    for i in range(1, len(ref) + 1):
        prev, row[0] = row[0], i
        for j in range(1, len(hyp) + 1):
            cur = row[j]
            row[j] = min(prev + (ref[i - 1] != hyp[j - 1]), row[j] + 1, row[j - 1] + 1)
            prev = cur
    return row[len(hyp)], len(ref)


def _check_against_rust_tests(tests_rs):
    """Runs every `assert_eq!(n("spoken"), "digits")` of the Rust unit tests through this port;
    prints the cases that differ. Returns how many differ."""
    import re
    case = re.compile(r'n\(\s*"((?:[^"\\]|\\.)*)"\s*\),\s*"((?:[^"\\]|\\.)*)"\s*\)', re.S)

    def unescape(s):
        s = re.sub(r"\\u\{([0-9a-fA-F]+)\}", lambda m: chr(int(m.group(1), 16)), s)
        return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), s)

    cases = case.findall(tests_rs.read_text(encoding="utf-8"))
    differ = 0
    for spoken, digits in cases:
        got = normalize_numbers(unescape(spoken))
        if got != unescape(digits):
            differ += 1
            print(f"{unescape(spoken)!r}: Rust {unescape(digits)!r}, here {got!r}")
    print(f"{len(cases) - differ} of {len(cases)} cases of {tests_rs} agree")
    return differ


if __name__ == "__main__":
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    sys.exit(1 if _check_against_rust_tests(root / "src/transcribe/numbers/tests.rs") else 0)
