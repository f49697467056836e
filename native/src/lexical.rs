//! The lexical scorer's text units (scorers/lexical.py): content words, CJK bigrams and numbers with their unit.
//! The word lists come from Python (the tables stay there, readable); this is the scanning. It reproduces the
//! regular expressions it replaced, backtracking included, with Python's character classes (\w: letters, numbers
//! and "_"; \d: decimal digits; \s: Python's whitespace) and offsets in characters, not bytes: parity with the
//! Python units is tested in tests/test_native_text.py.

pub mod bindings;
pub mod stage;

use rustc_hash::{FxHashMap, FxHashSet};
use unicode_general_category::{get_general_category, GeneralCategory as Category};

use crate::simplified::Simplified;

/// Words are slices of the lowered text's characters: no allocation per token.
type Word<'t> = &'t [char];

pub struct Tables {
    /// Unit spellings in the order they are tried (longest first), each with the unit it means.
    pub units: Vec<(Vec<char>, String)>,
    pub number_words: FxHashMap<Vec<char>, Vec<char>>,
    pub stopwords: FxHashSet<Vec<char>>,
    /// Chinese numerals' digits; 十 and 百 are the multipliers.
    pub cjk_digits: FxHashMap<char, u64>,
    /// What may follow a Chinese numeral for it to be read as a number ("三十天" is 30 days).
    pub cjk_units: Vec<Vec<char>>,
    /// CJK characters' Simplified forms: a Traditional answer shares its bigrams with a Simplified chunk.
    pub cjk_simplified: Simplified,
}

pub struct Units {
    pub words: FxHashSet<String>,
    /// (value, unit): unit "" when none.
    pub numbers: FxHashSet<(String, String)>,
}

impl Units {
    /// An upper estimate of the heap the sets hold: their tables (buckets at 8/7 of the capacity, an entry and a
    /// control byte each) and their strings' buffers; what a cache of units counts against its byte cap.
    pub fn heap_bytes(&self) -> usize {
        fn table<T>(capacity: usize) -> usize {
            (capacity * 8 / 7 + 1) * (std::mem::size_of::<T>() + 1)
        }
        table::<String>(self.words.capacity())
            + self.words.iter().map(String::capacity).sum::<usize>()
            + table::<(String, String)>(self.numbers.capacity())
            + self.numbers.iter().map(|(value, unit)| value.capacity() + unit.capacity()).sum::<usize>()
    }
}

/// The lexical scores of an answer and its question against the units of the trace's chunks (those with a text).
pub struct Scores {
    /// Share of the answer's words and numbers found in some chunk; None when it has none.
    pub groundedness: Option<f64>,
    /// Share of the question's words found in the answer; None when it has none.
    pub answer_relevancy: Option<f64>,
    /// Share of the question's words and numbers found in some chunk; None when it has none.
    pub context_relevance: Option<f64>,
    /// An answer's number that no chunk has: with its unit, or (unit-less) its value either.
    pub number_mismatch: bool,
}

/// The answer's units as `with_units` hands them (its words slices of its lowered text) against its question's and
/// its chunks' units: each word spelled into one reused buffer to be looked up, none held as a string of its own (the
/// answer's units were made into strings and a set of them, then dropped, for every trace).
pub fn score(answer_words: &FxHashSet<Word<'_>>, answer_numbers: &FxHashSet<(String, String)>, question: &Units,
             chunks: &[&Units]) -> Scores {
    let unfound_word = |word: &str| !chunks.iter().any(|chunk| chunk.words.contains(word));
    let unfound_number = |number: &(String, String)| !chunks.iter().any(|chunk| chunk.numbers.contains(number));
    let unfound_numbers: Vec<&(String, String)> = answer_numbers.iter().filter(|n| unfound_number(n)).collect();
    let (mut unfound, mut shared) = (unfound_numbers.len(), 0);
    let mut spelled = String::new();
    for word in answer_words {
        spelled.clear();
        spelled.extend(word.iter());
        unfound += usize::from(unfound_word(&spelled));
        shared += usize::from(question.words.contains(spelled.as_str())); // |question ∩ answer|, as counted from either
    }
    let unasked = question.words.iter().filter(|word| unfound_word(word)).count()
        + question.numbers.iter().filter(|number| unfound_number(number)).count();
    let share_found = |missing: usize, total: usize| (total > 0).then(|| 1.0 - missing as f64 / total as f64);
    Scores {
        groundedness: share_found(unfound, answer_words.len() + answer_numbers.len()),
        answer_relevancy: (!question.words.is_empty()).then(|| shared as f64 / question.words.len() as f64),
        context_relevance: share_found(unasked, question.words.len() + question.numbers.len()),
        number_mismatch: unfound_numbers.iter().any(|(value, unit)| {
            !unit.is_empty() || !chunks.iter().flat_map(|chunk| &chunk.numbers).any(|(other, _)| other == value)
        }),
    }
}

pub fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}' | '\u{f900}'..='\u{faff}')
}

/// Python's `\d` on str: the decimal digits of every script.
pub fn is_decimal(c: char) -> bool {
    c.is_ascii_digit() || (!c.is_ascii() && get_general_category(c) == Category::DecimalNumber)
}

/// Python's `\w` on str: letters, numbers and the underscore.
pub fn is_word(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    use Category::*;
    matches!(
        get_general_category(c),
        UppercaseLetter | LowercaseLetter | TitlecaseLetter | ModifierLetter | OtherLetter
            | DecimalNumber | LetterNumber | OtherNumber
    )
}

/// Python's `\s` on str (str.isspace): Unicode's White_Space and the four ASCII separators 0x1C-0x1F.
pub fn is_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

fn is_latin_word_char(c: char) -> bool {
    c.is_ascii_lowercase() || c == '\'' || c == '’' || c == '-'
}

/// `[a-z][a-z'’-]{2,}`, all matches: in each run of word characters, from its first letter to its end.
fn latin_words(text: &[char]) -> Vec<Word<'_>> {
    let mut words = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if !is_latin_word_char(text[i]) {
            i += 1;
            continue;
        }
        let end = i + text[i..].iter().take_while(|c| is_latin_word_char(**c)).count();
        if let Some(first) = text[i..end].iter().position(|c| c.is_ascii_lowercase()) {
            if end - (i + first) >= 3 {
                words.push(&text[i + first..end]);
            }
        }
        i = end;
    }
    words
}

/// `\b(one|two|...)\b` replaced by the digits: a whole run of word characters that is a number word.
fn digits_for_number_words(text: &[char], number_words: &FxHashMap<Vec<char>, Vec<char>>) -> Vec<char> {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if !is_word(text[i]) {
            out.push(text[i]);
            i += 1;
            continue;
        }
        let end = i + text[i..].iter().take_while(|c| is_word(**c)).count();
        match number_words.get(&text[i..end]) {
            Some(digits) => out.extend_from_slice(digits),
            None => out.extend_from_slice(&text[i..end]),
        }
        i = end;
    }
    out
}

/// A Chinese numeral's value, `digit` giving each digit character's: 三十五 -> 35, 十五 -> 15, 一百二十 -> 120,
/// 七 -> 7; 十, 百 and 千 multiply what precedes them (one when nothing does).
pub fn cjk_numeral(numeral: impl IntoIterator<Item = char>, digit: impl Fn(char) -> u64) -> u64 {
    let (mut total, mut current) = (0u64, 0u64);
    for c in numeral {
        let scale = match c {
            '十' => 10,
            '百' => 100,
            '千' => 1000,
            _ => {
                current = digit(c);
                continue;
            }
        };
        total += current.max(1) * scale;
        current = 0;
    }
    total + current
}

/// Python's `f"{float(n):g}"`: up to six significant digits, scientific notation from a million on.
fn format_g(n: u64) -> String {
    if n < 1_000_000 {
        return n.to_string();
    }
    let digits: Vec<u8> = n.to_string().bytes().map(|b| b - b'0').collect();
    let mut exponent = digits.len() - 1;
    let mut kept: Vec<u8> = digits[..6].to_vec();
    let rest = &digits[6..];
    let above_half = rest[0] > 5 || (rest[0] == 5 && rest[1..].iter().any(|d| *d != 0));
    let tie = rest[0] == 5 && rest[1..].iter().all(|d| *d == 0);
    if above_half || (tie && kept[5] % 2 == 1) {
        let mut position = 5;
        loop {
            if kept[position] < 9 {
                kept[position] += 1;
                break;
            }
            kept[position] = 0;
            if position == 0 {
                kept.insert(0, 1);
                kept.truncate(6);
                exponent += 1;
                break;
            }
            position -= 1;
        }
    }
    while kept.len() > 1 && kept[kept.len() - 1] == 0 {
        kept.pop();
    }
    let mut mantissa = ((kept[0] + b'0') as char).to_string();
    if kept.len() > 1 {
        mantissa.push('.');
        mantissa.extend(kept[1..].iter().map(|d| (d + b'0') as char));
    }
    format!("{mantissa}e+{exponent:02}")
}

/// `([零一...百]+)(个月|天|...)` replaced by the number in digits and its unit ("三十天" -> "30天").
fn digits_for_cjk_numbers(text: &[char], tables: &Tables) -> Vec<char> {
    let is_numeral = |c: char| c == '十' || c == '百' || tables.cjk_digits.contains_key(&c);
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        if !is_numeral(text[i]) {
            out.push(text[i]);
            i += 1;
            continue;
        }
        let end = i + text[i..].iter().take_while(|c| is_numeral(**c)).count();
        // No unit starts with a numeral, so only the whole run can be followed by one.
        match tables.cjk_units.iter().find(|unit| text[end..].starts_with(unit)) {
            Some(unit) => {
                out.extend(format_g(cjk_numeral(text[i..end].iter().copied(), |c| tables.cjk_digits[&c])).chars());
                out.extend_from_slice(unit);
                i = end + unit.len();
            }
            None => {
                out.extend_from_slice(&text[i..end]);
                i = end;
            }
        }
    }
    out
}

struct Number {
    end: usize,
    value: (usize, usize),
    unit: Option<usize>,
}

/// `(\d+(?:[.,]\d+)?)(?:-|\s*)(<unit>)?(?![a-z])` tried at `start`, backtracking in the regex engine's order.
fn number_at(text: &[char], start: usize, units: &[(Vec<char>, String)]) -> Option<Number> {
    let run = |from: usize, class: fn(char) -> bool| text[from..].iter().take_while(|c| class(**c)).count();
    let free = |at: usize| at >= text.len() || !text[at].is_ascii_lowercase();
    let unit_at = |at: usize| -> Option<(usize, Option<usize>)> {
        let next = text.get(at);
        for (index, (spelling, _)) in units.iter().enumerate() {
            // The first character tested inline: most spellings fail there, without a call to compare slices.
            if spelling.first().is_none_or(|first| Some(first) == next) && text[at..].starts_with(spelling)
                && free(at + spelling.len()) {
                return Some((at + spelling.len(), Some(index)));
            }
        }
        free(at).then_some((at, None))
    };
    let rest = |at: usize| -> Option<(usize, Option<usize>)> {
        if at < text.len() && text[at] == '-' {
            if let Some(found) = unit_at(at + 1) {
                return Some(found);
            }
        }
        (0..=run(at, is_space)).rev().find_map(|spaces| unit_at(at + spaces))
    };
    let digits = run(start, is_decimal);
    for length in (1..=digits).rev() {
        let at = start + length;
        if length == digits && at < text.len() && (text[at] == '.' || text[at] == ',') {
            for fraction in (1..=run(at + 1, is_decimal)).rev() {
                if let Some((end, unit)) = rest(at + 1 + fraction) {
                    return Some(Number { end, value: (start, at + 1 + fraction), unit });
                }
            }
        }
        if let Some((end, unit)) = rest(at) {
            return Some(Number { end, value: (start, at), unit });
        }
    }
    None
}

fn numbers(text: &[char], units: &[(Vec<char>, String)]) -> FxHashSet<(String, String)> {
    let mut found = FxHashSet::default();
    let mut i = 0;
    while i < text.len() {
        if !is_decimal(text[i]) {
            i += 1;
            continue;
        }
        match number_at(text, i, units) {
            Some(number) => {
                let value = text[number.value.0..number.value.1].iter().map(|c| if *c == ',' { '.' } else { *c });
                let unit = number.unit.map_or(String::new(), |index| units[index].1.clone());
                found.insert((value.collect(), unit));
                i = number.end;
            }
            None => i += 1,
        }
    }
    found
}

pub fn units(text: &str, tables: &Tables) -> Units {
    with_units(text, tables, |words, numbers| Units { words: words.iter().map(|word| word.iter().collect()).collect(),
                                                      numbers })
}

/// The text's units handed to `read`: its words as slices of its lowered text (no string made for any), its numbers.
pub fn with_units<R>(text: &str, tables: &Tables,
                     read: impl FnOnce(&FxHashSet<Word<'_>>, FxHashSet<(String, String)>) -> R) -> R {
    // An ASCII text (most) lowered byte by byte: str::to_lowercase's own, and nothing in it to fold to Simplified.
    let lowered: Vec<char> = if text.is_ascii() {
        text.bytes().map(|byte| char::from(byte.to_ascii_lowercase())).collect()
    } else {
        text.to_lowercase().chars().map(|c| tables.cjk_simplified.of(c)).collect()
    };
    let mut tokens = latin_words(&lowered);
    let replaced: Vec<char>;
    let mut text = &lowered[..];
    if tokens.iter().any(|token| tables.number_words.contains_key(*token)) {
        replaced = digits_for_number_words(&lowered, &tables.number_words); // "seven days" is "7 days"
        text = &replaced[..];
        tokens = latin_words(text);
    }
    // Sized for every token at once: collected from a filter, the set grew (and rehashed) several times a text.
    let mut words: FxHashSet<Word> = FxHashSet::with_capacity_and_hasher(tokens.len(), Default::default());
    words.extend(tokens.into_iter().filter(|token| !tables.stopwords.contains(*token)));
    // crude plural folding, the same on both sides: "returns" and "return" meet; all plurals removed before any
    // is added ("returnss" folds to "returns", kept)
    let plurals: Vec<Word> = words.iter().filter(|word| word.last() == Some(&'s') && word.len() > 4).copied().collect();
    for plural in &plurals {
        words.remove(plural);
    }
    words.extend(plurals.iter().map(|plural| &plural[..plural.len() - 1]));
    let with_cjk_numbers: Vec<char>;
    if text.iter().any(|c| is_cjk(*c)) {
        with_cjk_numbers = digits_for_cjk_numbers(text, tables);
        text = &with_cjk_numbers[..];
        let mut i = 0;
        while i < text.len() {
            let length = text[i..].iter().take_while(|c| is_cjk(**c)).count();
            if length == 1 {
                words.insert(&text[i..=i]);
            }
            words.extend(text[i..i + length].windows(2)); // Chinese has no spaces: character bigrams
            i += length.max(1);
        }
    }
    let numbers = if text.iter().any(|c| is_decimal(*c)) { numbers(text, &tables.units) } else { FxHashSet::default() };
    read(&words, numbers)
}

/// scorers/lexical.py's `_words_only` for an ASCII part (None for any other: Python's str.isdigit and lower have no
/// exact Rust twin beyond ASCII): its tokens (split on Python's whitespace) without the numbers, in digits or as a
/// number word, nor the unit just after one ("14 days", "$12.99", "two-week", "3-5").
pub fn words_only_ascii(part: &str, tables: &Tables) -> Option<String> {
    const EDGES: &[char] = &['.', ',', ';', ':', '!', '?', '(', ')', '[', ']', '{', '}', '"', '\''];
    if !part.is_ascii() {
        return None;
    }
    let is_number_word = |word: &str| tables.number_words.contains_key(&word.chars().collect::<Vec<char>>());
    let is_unit = |word: &str| tables.units.iter().any(|(spelling, _)| spelling.iter().copied().eq(word.chars()));
    let mut kept: Vec<&str> = Vec::new();
    let mut after_number = false;
    for token in part.split(is_space).filter(|token| !token.is_empty()) {
        let bare = token.trim_matches(EDGES).to_ascii_lowercase();
        let bare = bare.trim_start_matches('$');
        let lead = bare.split('-').next().unwrap_or_default();
        if !bare.is_empty() && (bare.as_bytes()[0].is_ascii_digit() || is_number_word(lead)) {
            after_number = true;
            continue;
        }
        if after_number && is_unit(bare) {
            after_number = false;
            continue;
        }
        after_number = false;
        kept.push(token);
    }
    Some(kept.join(" "))
}

#[cfg(test)]
mod tests {
    use super::format_g;

    #[test]
    fn format_g_rounds_like_python() {
        assert_eq!(format_g(999_999), "999999");
        assert_eq!(format_g(1_000_000), "1e+06");
        assert_eq!(format_g(1_234_565), "1.23456e+06"); // a tie: to even
        assert_eq!(format_g(1_234_575), "1.23458e+06");
        assert_eq!(format_g(12_345_651), "1.23457e+07");
        assert_eq!(format_g(9_999_995), "1e+07");
        assert_eq!(format_g(18_000_000), "1.8e+07");
    }
}
