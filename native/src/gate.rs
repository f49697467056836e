//! ragpulse._native.WordGate: whether an ASCII text holds one of a set of words, its words read without making them
//! Python strs. The refusal reading's gates (scorers/declines.py cued, scorers/refusal.py _answer_may_refuse) split a
//! whole answer into words to look for a cue; as Python's str and set operations that was ~16 µs of a FaithBench
//! summary's judgment, on every answer.
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
            if end == text.len() || self.parts[usize::from(text[end])] {
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
}
