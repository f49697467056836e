//! A text's sentences and clauses (scorers/text.py's sentences() and clauses()), as Python's `re.split` cut them
//! with the two patterns below: by hand, one pass each. In Python, `re` tried the clause pattern at every position (no
//! literal starts it) and the two splits were a fifth of a warm FaithBench judgment. tests/test_native_split.py holds
//! them to the Python patterns on generated text.
//!
//! A sentence ends at `(?<=[.!?])\s+|[。！？!?；;\n]+`; a clause starts at
//! `,\s+(?=(?:but|and|while|whereas|although|though|so|unless|otherwise|with|which)\b)|，|—`
//! `|\s+(?:and|but)\s+(?=(?:can|cannot|can't|is|isn't|are|aren't|does|doesn't|do|don't|will|won't|must|may|has|have)\b)`.

use crate::lexical::{is_space, is_word};

/// Words that open a clause after a comma.
const AFTER_COMMA: [&str; 11] = ["but", "and", "while", "whereas", "although", "though", "so", "unless", "otherwise", "with", "which"];
/// Verbs that open a second verb phrase after "and" or "but": "valid for 3 years and cannot be exchanged".
const AFTER_AND: [&str; 17] = [
    "can", "cannot", "can't", "is", "isn't", "are", "aren't", "does", "doesn't", "do", "don't", "will", "won't", "must",
    "may", "has", "have",
];

/// The end of the run of whitespace that starts at `start` (`start` itself when there is none).
fn spaces(text: &str, start: usize) -> usize {
    text[start..].find(|c: char| !is_space(c)).map_or(text.len(), |end| start + end)
}

/// One of `words` starts at `at` and a word boundary follows it (the pattern's `(?=(?:…)\b)`).
fn opens(text: &str, at: usize, words: &[&str]) -> bool {
    let rest = &text[at..];
    words.iter().any(|word| rest.starts_with(word) && !rest[word.len()..].chars().next().is_some_and(is_word))
}

/// The pieces of `text` between the matches that `find(text, position)` gives (a match's end, if one starts at
/// `position`), as `re.split` leaves them. `may_start`: whether a match may start at a character (others skipped).
fn split(text: &str, may_start: fn(char) -> bool, find: impl Fn(&str, usize) -> Option<usize>) -> Vec<&str> {
    let mut pieces = Vec::new();
    let (mut last, mut at) = (0, 0);
    loop {
        at = text[at..].find(may_start).map_or(text.len(), |skipped| at + skipped);
        let Some(c) = text[at..].chars().next() else { break };
        match find(text, at) {
            Some(end) => {
                pieces.push(&text[last..at]);
                (last, at) = (end, end);
            }
            None => at += c.len_utf8(),
        }
    }
    pieces.push(&text[last..]);
    pieces
}

fn ends(c: char) -> bool {
    matches!(c, '。' | '！' | '？' | '!' | '?' | '；' | ';' | '\n')
}

/// Whether a sentence end may start at a character: a space (after a stop) or a mark that ends one.
fn may_end(c: char) -> bool {
    is_space(c) || ends(c)
}

fn sentence_end(text: &str, at: usize) -> Option<usize> {
    let after_stop = text[..at].ends_with(['.', '!', '?']);
    let next = text[at..].chars().next()?;
    if after_stop && is_space(next) {
        return Some(spaces(text, at));
    }
    if !ends(next) {
        return None;
    }
    Some(text[at..].find(|c: char| !ends(c)).map_or(text.len(), |end| at + end))
}

/// Whether a clause may start at a character: a comma, a CJK comma, a dash or a space (before "and" or "but").
fn may_open(c: char) -> bool {
    matches!(c, ',' | '，' | '—') || is_space(c)
}

fn clause_start(text: &str, at: usize) -> Option<usize> {
    match text[at..].chars().next()? {
        ',' => {
            let end = spaces(text, at + 1);
            (end > at + 1 && opens(text, end, &AFTER_COMMA)).then_some(end)
        }
        c @ ('，' | '—') => Some(at + c.len_utf8()),
        c if is_space(c) => {
            let word = spaces(text, at);
            let rest = &text[word..];
            if !(rest.starts_with("and") || rest.starts_with("but")) {
                return None;
            }
            let end = spaces(text, word + 3);
            (end > word + 3 && opens(text, end, &AFTER_AND)).then_some(end)
        }
        _ => None,
    }
}

/// Python's str.strip() (no argument): whitespace as str.isspace() has it.
fn strip(text: &str) -> &str {
    text.trim_matches(is_space)
}

pub fn sentences(text: &str) -> Vec<&str> {
    split(text, may_end, sentence_end).into_iter().map(strip).filter(|sentence| !sentence.is_empty()).collect()
}

pub fn clauses(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for sentence in sentences(text) {
        let parts = split(sentence, may_open, clause_start).into_iter().map(|part| part.trim_matches([' ', ',', '.']));
        out.extend(parts.filter(|part| !part.is_empty()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_end_after_a_stop_and_space_or_at_cjk_punctuation() {
        assert_eq!(sentences("It costs 12.99 today. Really?Yes!  No\n\nfine"), ["It costs 12.99 today.", "Really", "Yes", "No", "fine"]);
        assert_eq!(sentences("a!! b"), ["a", "b"]); // "!!" ends one, then the space after a stop
        assert_eq!(sentences("退货免费。七天内；可以\u{3000}"), ["退货免费", "七天内", "可以"]);
        assert_eq!(sentences(" . \u{1c}"), ["."]);
        assert!(sentences("").is_empty());
    }

    #[test]
    fn clauses_start_at_a_conjunction_a_cjk_comma_or_a_second_verb_phrase() {
        assert_eq!(clauses("Returns are free, but shipping is not."), ["Returns are free", "but shipping is not"]);
        assert_eq!(clauses("Red, so on, soon"), ["Red", "so on, soon"]); // "soon" opens no clause: no boundary
        assert_eq!(clauses("valid for 3 years  and\tcannot be exchanged"), ["valid for 3 years", "cannot be exchanged"]);
        assert_eq!(clauses("cats and dogs and can't stop, and_x"), ["cats and dogs", "can't stop, and_x"]);
        assert_eq!(clauses("七天内，可以退货—免费。But,but"), ["七天内", "可以退货", "免费", "But,but"]);
        assert_eq!(clauses(", .,"), Vec::<&str>::new());
    }
}
