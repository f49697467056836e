//! ragpulse._native.StemMemo: English words' Snowball stems, remembered by the local judge (judging/local_judge.py
//! holds one, VerdictRules.claims reads it). A claim's words were stemmed each time it was analysed, a third of its
//! analysis; an answer's words are mostly its context's and the language's common words, which recur.
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use pyo3::prelude::*;
use rustc_hash::FxHashMap;

use super::Analyser;
use crate::metrics::FastCounter;

/// What a remembered stem costs besides its word's and its own UTF-8 bytes: its slot in the map (32 bytes, up to
/// twice that past the table's load and growth) and in the queue (16, as much again), the word's and the stem's
/// allocations (a header and malloc's rounding, 32 bytes at least each).
pub const ENTRY_BYTES: usize = 176;

#[derive(Default)]
struct Held {
    stems: FxHashMap<Arc<str>, Box<str>>,
    order: VecDeque<Arc<str>>, // oldest first
    bytes: usize,
}

/// The stems most recently made, at most `max_entries` within `max_bytes` (their words' and stems' UTF-8 bytes and
/// ENTRY_BYTES each): the oldest made goes first, counted in `evicted`.
#[pyclass(frozen, module = "ragpulse._native")]
pub struct StemMemo {
    held: Mutex<Held>,
    max_entries: usize,
    max_bytes: usize,
    evicted: Py<FastCounter>,
}

impl StemMemo {
    /// The stem of `word` (lower-cased) as `analyser` makes it: the one remembered, or a new one (then remembered).
    pub fn stem(&self, analyser: &Analyser, word: &str) -> String {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(stem) = held.stems.get(word) {
            return String::from(&**stem); // not to_string(): a Box<str>'s goes through the formatter, growing as it writes
        }
        let stem = analyser.stem(word);
        let cost = word.len() + stem.len() + ENTRY_BYTES;
        if cost > self.max_bytes || self.max_entries == 0 {
            return stem;
        }
        let key: Arc<str> = Arc::from(word);
        held.stems.insert(Arc::clone(&key), stem.as_str().into());
        held.order.push_back(key);
        held.bytes += cost;
        while held.stems.len() > self.max_entries || held.bytes > self.max_bytes {
            let Some(oldest) = held.order.pop_front() else { break };
            if let Some(gone) = held.stems.remove(&oldest) {
                held.bytes -= oldest.len() + gone.len() + ENTRY_BYTES;
            }
            self.evicted.get().add(1.0);
        }
        stem
    }
}

#[pymethods]
impl StemMemo {
    #[new]
    fn new(max_entries: usize, max_bytes: usize, evicted: Py<FastCounter>) -> Self {
        StemMemo { held: Mutex::new(Held::default()), max_entries, max_bytes, evicted }
    }

    fn __len__(&self) -> usize {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).stems.len()
    }

    #[getter]
    fn bytes(&self) -> usize {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).bytes
    }
}
