//! ragpulse._native.TextCache: retrieved documents' texts that recur across OTLP requests (a knowledge base's chunks),
//! made into Python strings once while held (sources/otlp/receiver.py holds one; native/src/otlp/bindings.rs uses it).
//! Each request's spans wait in the assembler for their trace's grace, then become events: a chunk retrieved by many
//! traces was one string in each of them.
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use pyo3::prelude::*;
use pyo3::types::PyString;
use rustc_hash::FxHashMap;

use crate::metrics::FastCounter;

/// What a held text costs besides its UTF-8 bytes (its key, its slot in the map and the queue, the string's header).
pub const ENTRY_BYTES: usize = 160;
/// Shorter texts are not held: ids, scores' words and titles cost little each and would churn the cache.
pub const MIN_BYTES: usize = 64;

#[derive(Default)]
struct Held {
    made: FxHashMap<Arc<str>, Py<PyString>>,
    order: VecDeque<Arc<str>>, // oldest first
    bytes: usize,
}

/// The texts most recently made, at most `max_entries` within `max_bytes` (their UTF-8 bytes and ENTRY_BYTES each): the
/// oldest made goes first, counted in `evicted`. A text it lets go lives on in the spans and events that hold it.
#[pyclass(frozen, module = "ragpulse._native")]
pub struct TextCache {
    held: Mutex<Held>,
    max_entries: usize,
    max_bytes: usize,
    evicted: Py<FastCounter>,
}

impl TextCache {
    /// The string of `text`: the one held, or a new one (then held).
    pub fn get<'py>(&self, py: Python<'py>, text: &str) -> Bound<'py, PyString> {
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(made) = held.made.get(text) {
            return made.bind(py).clone();
        }
        let made = PyString::new(py, text);
        let cost = text.len() + ENTRY_BYTES;
        if text.len() < MIN_BYTES || cost > self.max_bytes {
            return made;
        }
        let key: Arc<str> = Arc::from(text);
        held.made.insert(Arc::clone(&key), made.clone().unbind());
        held.order.push_back(key);
        held.bytes += cost;
        while held.made.len() > self.max_entries || held.bytes > self.max_bytes {
            let Some(oldest) = held.order.pop_front() else { break };
            held.made.remove(&oldest);
            held.bytes -= oldest.len() + ENTRY_BYTES;
            self.evicted.get().add(1.0);
        }
        made
    }
}

#[pymethods]
impl TextCache {
    #[new]
    fn new(max_entries: usize, max_bytes: usize, evicted: Py<FastCounter>) -> Self {
        TextCache { held: Mutex::new(Held::default()), max_entries, max_bytes, evicted }
    }

    fn __len__(&self) -> usize {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).made.len()
    }

    #[getter]
    fn bytes(&self) -> usize {
        self.held.lock().unwrap_or_else(PoisonError::into_inner).bytes
    }
}
