//! ragpulse._native.WordGate: whether an ASCII text holds one of a set of words, its words read without making them
//! Python strs. The refusal reading's gates (scorers/declines.py cued, scorers/refusal.py _answer_may_refuse) split a
//! whole answer into words to look for a cue; as Python's str and set operations that was ~16 µs of a FaithBench
//! summary's judgment, on every answer. WordGates: several such sets in one call (the refusal reading's cue words and
//! its deferral's words: one call an answer, not two). Substrings: whether an ASCII text, lower-cased, holds one of a
//! few strings (scorers/small_models.py's gate of the speaker's rules: nine `in` scans of a summary cost 4-5 µs).
use memchr::memmem::Finder;
use pyo3::prelude::*;
use pyo3::types::PyString;
use rustc_hash::FxHashSet;

/// The words, and the bytes that part them: a text's words are its maximal runs of other bytes, lower-cased. A word
/// with a space in it ("need to") is two words in a row, parted by spaces or bytes beyond ASCII only ("hole-in-one" holds
/// no "hole in"; "I’d" holds "i d").
#[pyclass(frozen, module = "ragpulse._native")]
pub struct WordGate {
    words: FxHashSet<Vec<u8>>,
    parts: [bool; 128],
    pairs: bool,
}

impl WordGate {
    fn meets(&self, text: &[u8]) -> bool {
        let (mut start, mut lower, mut pair) = (0, Vec::with_capacity(32), Vec::with_capacity(64));
        for end in 0..=text.len() {
            if end == text.len() || !text[end].is_ascii() || self.parts[usize::from(text[end])] {
                if end > start {
                    lower.clear();
                    lower.extend(text[start..end].iter().map(u8::to_ascii_lowercase));
                    if self.words.contains(lower.as_slice()) {
                        return true;
                    }
                    if self.pairs {
                        // the word before and this one: "need" then "to" ("\n" before: none)
                        pair.push(b' ');
                        pair.extend_from_slice(&lower);
                        if self.words.contains(pair.as_slice()) {
                            return true;
                        }
                        pair.clear();
                        pair.extend_from_slice(&lower);
                    }
                }
                if self.pairs && end < text.len() && text[end].is_ascii() && !text[end].is_ascii_whitespace() {
                    pair.clear(); // parted by punctuation: the next word is no second word of a pair
                    pair.push(b'\n');
                }
                start = end + 1;
            }
        }
        false
    }
}

#[pymethods]
impl WordGate {
    /// `parts`: the ASCII characters that part words (others are ignored).
    #[new]
    fn new(words: Vec<String>, parts: &str) -> Self {
        let mut parting = [false; 128];
        for byte in parts.bytes().filter(u8::is_ascii) {
            parting[usize::from(byte)] = true;
        }
        let pairs = words.iter().any(|word| word.contains(' '));
        WordGate { words: words.into_iter().map(String::into_bytes).collect(), parts: parting, pairs }
    }

    /// Whether a word of the text, lower-cased, is one of the words; None when the text is not ASCII (the caller reads
    /// it as before: lower-casing and splitting beyond ASCII are Python's).
    fn meets_in(&self, text: &Bound<'_, PyString>) -> PyResult<Option<bool>> {
        // SAFETY: `text` is a live str, held by its Bound; the macro reads its state flags.
        if unsafe { pyo3::ffi::PyUnicode_IS_ASCII(text.as_ptr()) } == 0 {
            return Ok(None);
        }
        Ok(Some(self.meets(text.to_str()?.as_bytes())))
    }
}

/// Several word sets, each with the bytes that part its words; in any text, a byte beyond ASCII parts words too (a
/// character beyond ASCII read as a "?" that parts them).
#[pyclass(frozen, module = "ragpulse._native")]
pub struct WordGates {
    groups: Vec<WordGate>,
    needs: Vec<u64>,
}

impl WordGates {
    fn met(&self, text: &[u8]) -> u64 {
        let mut mask = 0;
        for (index, (group, &needs)) in self.groups.iter().zip(&self.needs).enumerate() {
            if mask & needs == needs && group.meets(text) {
                mask |= 1 << index;
            }
        }
        mask
    }
}

#[pymethods]
impl WordGates {
    /// `groups`: (words, the ASCII characters that part them), at most 64; `needs`: for each, the bits of the sets
    /// met before it that it is read after (0: always read; a set not read is not met).
    #[new]
    #[pyo3(signature = (groups, needs=None))]
    fn new(groups: Vec<(Vec<String>, String)>, needs: Option<Vec<u64>>) -> PyResult<Self> {
        let needs = needs.unwrap_or_else(|| vec![0; groups.len()]);
        if groups.len() > 64 || needs.len() != groups.len() {
            return Err(pyo3::exceptions::PyValueError::new_err("at most 64 word sets, a need for each"));
        }
        let groups = groups.into_iter().map(|(words, parts)| WordGate::new(words, &parts)).collect();
        Ok(WordGates { groups, needs })
    }

    /// A bit for each set (1 << its index) one of whose words is a word of the text, lower-cased (ASCII only).
    fn met_in(&self, text: &str) -> u64 {
        self.met(text.as_bytes())
    }
}

/// Strings looked for anywhere in a text (not as words), each with memchr's substring search.
#[pyclass(frozen, module = "ragpulse._native")]
pub struct Substrings {
    finders: Vec<Finder<'static>>,
}

impl Substrings {
    fn held_in(&self, text: &[u8]) -> bool {
        let lower = text.to_ascii_lowercase();
        self.finders.iter().any(|finder| finder.find(&lower).is_some())
    }
}

#[pymethods]
impl Substrings {
    #[new]
    fn new(strings: Vec<String>) -> Self {
        Substrings { finders: strings.iter().map(|string| Finder::new(string.as_bytes()).into_owned()).collect() }
    }

    /// Whether the text, lower-cased, holds one of the strings (Python's `any(s in text.lower() for s in strings)`);
    /// None when the text is not ASCII (lower-casing beyond ASCII is Python's).
    fn in_lowered(&self, text: &Bound<'_, PyString>) -> PyResult<Option<bool>> {
        // SAFETY: `text` is a live str, held by its Bound; the macro reads its state flags.
        if unsafe { pyo3::ffi::PyUnicode_IS_ASCII(text.as_ptr()) } == 0 {
            return Ok(None);
        }
        Ok(Some(self.held_in(text.to_str()?.as_bytes())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_runs_between_the_parting_bytes_lower_cased() {
        let gate = WordGate::new(vec!["not".into(), "idk".into()], " -");
        let meets = |text: &str| gate.meets(text.as_bytes());
        assert!(meets("I do NOT know") && meets("idk") && meets("well-not") && meets("x  not "));
        assert!(!meets("nothing known") && !meets("not.") && !meets("") && !meets("  "));
    }

    #[test]
    fn each_set_its_own_parts_and_a_byte_beyond_ascii_parts_words() {
        let gates = WordGates::new(vec![(vec!["not".into()], " ".into()), (vec!["team".into()], " .".into())], None).unwrap();
        let met = |text: &str| gates.met(text.as_bytes());
        assert_eq!([met("NOT here"), met("our team."), met("not team"), met("no teams"), met("é team…")], [1, 2, 3, 0, 2]);
        assert_eq!([met("not.team"), met("notéteam")], [2, 3]);
        let after = WordGates::new(vec![(vec!["not".into()], " ".into()), (vec!["team".into()], " ".into())], Some(vec![0, 1]));
        let met = |text: &str| after.as_ref().unwrap().met(text.as_bytes());
        assert_eq!([met("not team"), met("our team"), met("not here")], [3, 0, 1]);
    }

    #[test]
    fn a_word_with_a_space_is_two_words_in_a_row() {
        let gate = WordGate::new(vec!["need to".into(), "please".into()], " ,\n");
        let meets = |text: &str| gate.meets(text.as_bytes());
        assert!(meets("you NEED  to call") && meets("need\n to") && meets("need’to") && meets("please") && meets("x need to"));
        assert!(!meets("need it to") && !meets("needto") && !meets("to need") && !meets("need") && !meets("need,to"));
    }

    #[test]
    fn substrings_are_found_anywhere_in_the_text_lower_cased() {
        let strings = Substrings::new(vec!["my rule".into(), "stay ".into()]);
        let held = |text: &str| strings.held_in(text.as_bytes());
        assert!(held("According to My Rules, no") && held("army rule") && held("I STAY out") && held("stay "));
        assert!(!held("my  rule") && !held("stay") && !held("") && !held("rule my"));
        assert!(!Substrings::new(vec![]).held_in(b"anything"));
    }
}
