//! The analysis's scans of scorers/text.py's simplest patterns (native/src/clause.rs).

use rustc_hash::{FxHashMap, FxHashSet};

use crate::lexical::{is_cjk, is_decimal, is_space, is_word};

/// scorers/text.py's patterns that the analysis scans instead of running them (their translations for the crate,
/// which TextAnalyser checks it is given: a changed pattern needs its scanner changed). A scan matches where the
/// pattern would, without fancy-regex's per-match cost: the three were a fifth of an English clause's analysis.
pub const LATIN_WORD: &str = "[a-z][a-z0-9+]*(?:['’][a-z]+)?";
pub const NAME: &str = r"(?<![.!?。！？][\s\x1c-\x1f])(?<=[\s\x1c-\x1f\S])[A-Z](?<!(?-i:[\p{L}\p{N}_])[A-Z])[A-Za-z0-9+]*(?:[\s\x1c-\x1f]+[A-Z][A-Za-z0-9+]*)*";
pub const LIST_ITEM: &str = r"^[\s\x1c-\x1f]*(?:[-*•]|\(?\p{Nd}{1,2}[.)])?[\s\x1c-\x1f]*";

/// Place names by their written forms' first character (scorers/cjk_places.py): a form, and the names it stands for.
pub type Places = FxHashMap<char, Vec<(String, Vec<String>)>>;

/// The table of written forms and the names each stands for, keyed for `places`.
pub fn places_by_first_char(forms: FxHashMap<String, Vec<String>>) -> Places {
    let mut places = Places::default();
    for (form, names) in forms {
        if let Some(first) = form.chars().next() {
            places.entry(first).or_default().push((form, names));
        }
    }
    places
}

/// The names of the places a text names, every written form found added to `into`, overlapping ones too (内蒙古 names
/// 内蒙古 and 蒙古): one look-up a character.
pub fn places(places: &Places, text: &str, into: &mut FxHashSet<String>) {
    for (i, c) in text.char_indices() {
        for (form, names) in places.get(&c).into_iter().flatten() {
            if text[i..].starts_with(form.as_str()) {
                into.extend(names.iter().cloned());
            }
        }
    }
}

/// The words of lower-cased text that scorers/text.py's question_terms reads: `[a-z0-9]+(?:['’][a-z]+)*` (a word and
/// its apostrophe endings) or a run of CJK characters, leftmost first. A scan: the pattern's search over a
/// FaithBench answer (~540 characters) was 7 µs, most of the judge's relevancy.
pub fn question_words(lower: &str) -> Vec<&str> {
    let is_alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let bytes = lower.as_bytes();
    let mut words = Vec::new();
    let mut i = 0; // always at a character's start
    while i < bytes.len() {
        let start = i;
        if is_alnum(bytes[i]) {
            while i < bytes.len() && is_alnum(bytes[i]) {
                i += 1;
            }
            loop {
                let rest = &lower[i..];
                let quote = if rest.starts_with('\'') { 1 } else if rest.starts_with('’') { '’'.len_utf8() } else { 0 };
                if quote == 0 || !rest.as_bytes().get(quote).is_some_and(u8::is_ascii_lowercase) {
                    break;
                }
                i += quote;
                while i < bytes.len() && bytes[i].is_ascii_lowercase() {
                    i += 1;
                }
            }
            words.push(&lower[start..i]);
            continue;
        }
        let mut run = lower[i..].chars();
        let first = run.next().unwrap_or_default();
        i += first.len_utf8();
        if is_cjk(first) {
            i += run.take_while(|c| is_cjk(*c)).map(char::len_utf8).sum::<usize>();
            words.push(&lower[start..i]);
        }
    }
    words
}

/// LATIN_WORD's matches, leftmost first: a lower-case letter, then letters, digits and "+", then an apostrophe and
/// letters if a letter follows it. Bytes are scanned: no byte of a multi-byte character is an ASCII letter.
pub fn latin_words(lower: &str) -> impl Iterator<Item = &str> {
    let bytes = lower.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        i += bytes[i.min(bytes.len())..].iter().take_while(|b| !b.is_ascii_lowercase()).count();
        if i >= bytes.len() {
            return None;
        }
        let start = i;
        i += 1 + bytes[i + 1..].iter().take_while(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || **b == b'+').count();
        let quote = if bytes[i..].starts_with(b"'") { 1 } else if lower[i..].starts_with('’') { '’'.len_utf8() } else { 0 };
        if quote > 0 && bytes.get(i + quote).is_some_and(u8::is_ascii_lowercase) {
            i += quote + bytes[i + quote..].iter().take_while(|b| b.is_ascii_lowercase()).count();
        }
        Some(&lower[start..i])
    })
}

/// NAME's matches: an ASCII capital not first, after no word character nor a sentence end and a space, then letters,
/// digits and "+", then more such words after spaces. Greedy with nothing after it, the pattern never backtracks.
pub fn names(text: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let is_part = |c: char| c.is_ascii_alphanumeric() || c == '+';
    let word_end = |mut j: usize| {
        while j < chars.len() && is_part(chars[j].1) {
            j += 1;
        }
        j
    };
    let mut found = Vec::new();
    let mut k = 1;
    while k < chars.len() {
        let before = chars[k - 1].1;
        let after_sentence = k >= 2 && is_space(before) && matches!(chars[k - 2].1, '.' | '!' | '?' | '。' | '！' | '？');
        if !chars[k].1.is_ascii_uppercase() || is_word(before) || after_sentence {
            k += 1;
            continue;
        }
        let mut end = word_end(k + 1);
        loop {
            let spaces = chars[end..].iter().take_while(|(_, c)| is_space(*c)).count();
            match chars.get(end + spaces) {
                Some((_, c)) if spaces > 0 && c.is_ascii_uppercase() => end = word_end(end + spaces + 1),
                _ => break,
            }
        }
        found.push(&text[chars[k].0..chars.get(end).map_or(text.len(), |(at, _)| *at)]);
        k = end;
    }
    found
}

/// The text after LIST_ITEM's match at its start: spaces, then a dash, "*", "•" or a number of one or two digits
/// (in parentheses or before "." or ")"), then spaces. Each part either matches whole or not at all.
pub fn after_list_item(text: &str) -> &str {
    let rest = text.trim_start_matches(is_space);
    let mut marker = rest.chars();
    let after_marker = match marker.next() {
        Some('-' | '*' | '•') => marker.as_str(),
        _ => {
            let digits = rest.strip_prefix('(').unwrap_or(rest);
            let count = digits.chars().take(2).take_while(|c| is_decimal(*c)).count();
            let number: usize = digits.chars().take(count).map(char::len_utf8).sum();
            match digits[number..].strip_prefix(['.', ')']) {
                Some(after) if count > 0 => after,
                _ => rest,
            }
        }
    };
    after_marker.trim_start_matches(is_space)
}

/// QUANTITY_START with its words and scales between its head and tail (scorers/text.py's quantity_start).
const START_HEAD: &str = r"(?<!(?-i:[\p{L}\p{N}_]))\p{Nd}|[$€£¥￥]|(?<!(?-i:[\p{L}\p{N}_]))(?:";
const START_SCALES: &str = r"|an?[\s\x1c-\x1f]+(?:";
const START_TAIL: &str = r"))(?!(?-i:[\p{L}\p{N}_]))";

/// Whether `pattern` is QUANTITY_START with these words and scales (in any order), the pattern quantity_starts scans.
pub fn scans_starts(pattern: &str, words: &FxHashSet<String>, scales: &FxHashMap<String, f64>) -> bool {
    let Some(middle) = pattern.strip_prefix(START_HEAD).and_then(|rest| rest.strip_suffix(START_TAIL)) else {
        return false;
    };
    let Some((listed, scaled)) = middle.split_once(START_SCALES) else { return false };
    let listed: FxHashSet<&str> = listed.split('|').collect();
    let scaled: FxHashSet<&str> = scaled.split('|').collect();
    listed.len() == words.len() && words.iter().all(|word| listed.contains(word.as_str()))
        && scaled.len() == scales.len() && scales.keys().all(|scale| scaled.contains(scale.as_str()))
}

/// The run of word characters (Python's \w) that starts at `at`.
fn word_run(text: &str, at: usize) -> &str {
    let end = text[at..].find(|c: char| !is_word(c)).map_or(text.len(), |length| at + length);
    &text[at..end]
}

/// Where QUANTITY_START's matches start, leftmost first (they never overlap): a decimal digit after no word
/// character, a currency sign, or after no word character a run of word characters that is one of `words` (its
/// words are whole runs: each is followed by no word character), or "a"/"an", spaces and a run that is one of
/// `scales`. A run that is none of these holds no start.
pub fn quantity_starts(text: &str, words: &FxHashSet<String>, scales: &FxHashMap<String, f64>) -> Vec<usize> {
    let mut starts = Vec::new();
    let (mut at, mut after_word) = (0, false);
    while let Some(c) = text[at..].chars().next() {
        if (!after_word && is_decimal(c)) || matches!(c, '$' | '€' | '£' | '¥' | '￥') {
            starts.push(at);
        } else if !after_word && is_word(c) {
            let run = word_run(text, at);
            let mut end = at + run.len();
            if words.contains(run) {
                starts.push(at);
            } else if run == "a" || run == "an" {
                let spaced = end + text[end..].chars().take_while(|c| is_space(*c)).map(char::len_utf8).sum::<usize>();
                let scale = word_run(text, spaced);
                if spaced > end && scales.contains_key(scale) {
                    starts.push(at);
                    end = spaced + scale.len();
                }
            }
            (at, after_word) = (end, true);
            continue;
        }
        at += c.len_utf8();
        after_word = is_word(c);
    }
    starts
}

/// Whether en_quantity at `start` can match only its value alternative, and that without a scale word: a decimal
/// digit there (no sign, rate or "once" opens), and after the run of digits, "," and "." (a number in digits ends
/// inside it only before a digit, "," or ".", which nothing that follows a range's or an age's number starts with)
/// neither spaces and "to", "-", "–" or "~", which a range needs, nor spaces and a scale word ("5 million", "5 million
/// to 6 million"), nor a character and "year", which an age needs. "15 people", "3 days": only the value.
pub fn opens_no_range(text: &str, start: usize, scales: &FxHashMap<String, f64>) -> bool {
    let rest = &text[start..];
    if !rest.chars().next().is_some_and(is_decimal) {
        return false;
    }
    let after = &rest[rest.find(|c: char| !(is_decimal(c) || c == ',' || c == '.')).unwrap_or(rest.len())..];
    let spaced = after.trim_start_matches(is_space);
    let range = spaced.starts_with(['-', '–', '~']) || spaced.starts_with("to")
        || (spaced.len() < after.len() && scales.keys().any(|scale| spaced.starts_with(scale.as_str())));
    let mut separated = after.chars();
    let age = separated.next().is_some() && separated.as_str().starts_with("year");
    !range && !age
}

/// The matches of `\b[A-Z][A-Za-z0-9+]+` (judging/local_judge.py read a short claim's names by it): an ASCII capital
/// after no word character (nor first), then at least one letter, digit or "+", as many as there are.
pub fn capitalised(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut previous: Option<char> = None;
    let mut rest = text.char_indices().peekable();
    while let Some((start, c)) = rest.next() {
        previous = if c.is_ascii_uppercase() && !previous.is_some_and(is_word) {
            let mut end = start + 1;
            while let Some((at, _)) = rest.next_if(|(_, next)| next.is_ascii_alphanumeric() || *next == '+') {
                end = at + 1;
            }
            if end > start + 1 {
                found.push(&text[start..end]);
            }
            text[..end].chars().next_back()
        } else {
            Some(c)
        };
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Texts of pieces where the scans could part from the patterns: capitals after sentence ends, spaces of every
    /// kind, apostrophes, list markers, digits of other scripts, word characters outside ASCII.
    fn texts() -> Vec<String> {
        const PIECES: [&str; 34] = [
            "a", "Z", "Ab", "x9+", " ", "  ", "\u{3000}", "\x1c", "\n", ".", "!", "?", "。", "？", "'", "’", "'s", "-",
            "*", "•", "(", ")", "1", "12", "٣", "é", "É", "_", "中", "Bob Smith", "it’s", "U.S.", "3.", "(7)",
        ];
        let mut state = 44u64;
        let mut next = move |bound: usize| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as usize % bound
        };
        (0..20_000).map(|_| (0..next(10)).map(|_| PIECES[next(PIECES.len())]).collect()).collect()
    }

    fn spans<'t>(pattern: &fancy_regex::Regex, text: &'t str) -> Vec<&'t str> {
        pattern.find_iter(text).map(|found| found.expect("matched").as_str()).collect()
    }

    #[test]
    fn the_scans_match_where_the_patterns_match() {
        let compiled = |pattern: &str| fancy_regex::Regex::new(pattern).expect("compiles");
        let (latin, name, list) = (compiled(LATIN_WORD), compiled(NAME), compiled(LIST_ITEM));
        // \b before a capital (a word character): none before it, as scorers/crate_regex.py translates it
        let capital = compiled(r"(?<!(?-i:[\p{L}\p{N}_]))[A-Z][A-Za-z0-9+]+");
        for text in texts() {
            let lower = text.to_lowercase();
            assert_eq!(latin_words(&lower).collect::<Vec<_>>(), spans(&latin, &lower), "{lower:?}");
            assert_eq!(latin_words(&text).collect::<Vec<_>>(), spans(&latin, &text), "{text:?}");
            assert_eq!(names(&text), spans(&name, &text), "{text:?}");
            assert_eq!(after_list_item(&text), list.replacen(&text, 1, ""), "{text:?}");
            assert_eq!(capitalised(&text), spans(&capital, &text), "{text:?}");
        }
        assert_eq!(capitalised("A Bc+D éFg _Hi j+Kl MN"), ["Bc+D", "Kl", "MN"]);
        assert_eq!(names("We met Bob  Smith. Then Ann and IBM+ X"), ["Bob  Smith", "Ann", "IBM+ X"]);
        assert_eq!(latin_words("it’s rock'n'roll x'1").collect::<Vec<_>>(), ["it’s", "rock'n", "roll", "x"]);
        assert_eq!(after_list_item(" (12) item"), "item");
    }

    #[test]
    fn quantity_starts_are_where_the_pattern_matches() {
        let words: FxHashSet<String> = ["one", "two", "twenty", "per", "hundred", "half"].map(String::from).into_iter().collect();
        let scales: FxHashMap<String, f64> = [("hundred", 1e2), ("thousand", 1e3)].map(|(s, v)| (s.to_string(), v)).into_iter().collect();
        let alternation = |names: Vec<&str>| names.join("|");
        let pattern = format!("{START_HEAD}{}{START_SCALES}{}{START_TAIL}",
                              alternation(words.iter().map(String::as_str).collect()), alternation(vec!["hundred", "thousand"]));
        assert!(scans_starts(&pattern, &words, &scales));
        assert!(!scans_starts(&pattern.replace("twenty|", ""), &words, &scales));
        let regex = fancy_regex::Regex::new(&pattern).expect("compiles");
        const PIECES: [&str; 24] = [
            "one", "two", "twenty", "per", "hundred", "half", "a", "an", "thousand", " ", "\u{3000}", "-", "1", "٣",
            "$", "€", "x", "_", "é", "中", ".", "ones", "a thousand", "an hundred",
        ];
        let mut state = 47u64;
        let mut next = move |bound: usize| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as usize % bound
        };
        for _ in 0..20_000 {
            let text: String = (0..next(8)).map(|_| PIECES[next(PIECES.len())]).collect();
            let expected: Vec<usize> = regex.find_iter(&text).map(|found| found.expect("matched").start()).collect();
            assert_eq!(quantity_starts(&text, &words, &scales), expected, "{text:?}");
        }
        assert_eq!(quantity_starts("a thousand, 2 per $5 twentyone", &words, &scales), [0, 12, 14, 18, 19]);
    }

    #[test]
    fn places_are_found_wherever_a_form_starts_overlapping_ones_too() {
        let forms: FxHashMap<String, Vec<String>> = [
            ("日本", vec!["日本"]), ("韓國", vec!["韩国"]), ("韩国", vec!["韩国"]), ("蒙古", vec!["蒙古"]),
            ("内蒙古", vec!["内蒙古"]), ("港澳", vec!["香港", "澳门"]),
        ].into_iter().map(|(form, names)| (form.to_string(), names.into_iter().map(str::to_string).collect())).collect();
        let table = places_by_first_char(forms);
        let found = |text: &str| {
            let mut names = FxHashSet::default();
            places(&table, text, &mut names);
            let mut names: Vec<String> = names.into_iter().collect();
            names.sort();
            names
        };
        assert_eq!(found("寄到日本和韓國，内蒙古不包邮"), ["内蒙古", "日本", "蒙古", "韩国"]);
        assert_eq!(found("港澳地区"), ["澳门", "香港"]);
        assert_eq!(found("日"), Vec::<String>::new()); // a form's first character alone names nothing
    }
}
