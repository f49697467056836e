//! ragpulse._native.WordGate: whether an ASCII text holds one of a set of words, its words read without making them
//! Python strs. The refusal reading's gates (scorers/declines.py cued, scorers/refusal.py _answer_may_refuse) split a
//! whole answer into words to look for a cue; as Python's str and set operations that was ~16 µs of a FaithBench
//! summary's judgment, on every answer. WordGates: several such sets in one call (the refusal reading's cue words and
//! its deferral's words: one call an answer, not two).
use pyo3::prelude::*;
use pyo3::types::PyString;
use rustc_hash::FxHashSet;

/// The words, and the bytes that part them: a text's words are its maximal runs of other bytes, lower-cased.
#[pyclass(frozen, module = "ragpulse._native")]
pub struct WordGate {
    words: FxHashSet<Vec<u8>>,
    parts: [bool; 128],
}

impl WordGate {
    fn meets(&self, text: &[u8]) -> bool {
        let (mut start, mut lower) = (0, Vec::with_capacity(32));
        for end in 0..=text.len() {
            if end == text.len() || !text[end].is_ascii() || self.parts[usize::from(text[end])] {
                if end > start {
                    lower.clear();
                    lower.extend(text[start..end].iter().map(u8::to_ascii_lowercase));
                    if self.words.contains(lower.as_slice()) {
                        return true;
                    }
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
        WordGate { words: words.into_iter().map(String::into_bytes).collect(), parts: parting }
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
}

impl WordGates {
    fn met(&self, text: &[u8]) -> u64 {
        self.groups.iter().enumerate().filter(|(_, group)| group.meets(text)).fold(0, |mask, (index, _)| mask | 1 << index)
    }
}

#[pymethods]
impl WordGates {
    /// `groups`: (words, the ASCII characters that part them), at most 64.
    #[new]
    fn new(groups: Vec<(Vec<String>, String)>) -> PyResult<Self> {
        if groups.len() > 64 {
            return Err(pyo3::exceptions::PyValueError::new_err("at most 64 word sets"));
        }
        Ok(WordGates { groups: groups.into_iter().map(|(words, parts)| WordGate::new(words, &parts)).collect() })
    }

    /// A bit for each set (1 << its index) one of whose words is a word of the text, lower-cased (ASCII only).
    fn met_in(&self, text: &str) -> u64 {
        self.met(text.as_bytes())
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
        let gates = WordGates::new(vec![(vec!["not".into()], " ".into()), (vec!["team".into()], " .".into())]).unwrap();
        let met = |text: &str| gates.met(text.as_bytes());
        assert_eq!([met("NOT here"), met("our team."), met("not team"), met("no teams"), met("é team…")], [1, 2, 3, 0, 2]);
        assert_eq!([met("not.team"), met("notéteam")], [2, 3]);
    }
}
