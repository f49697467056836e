//! ragpulse._native.KeptTexts: the form of the events the feedback join keeps for late signals, their chunks' texts
//! held once (feedback/kept.py says why and what `pack` returns; it held this in Python, for every judgeable trace).
//! The store of texts is capped in entries and bytes, the least recently kept text going first, counted.
use std::collections::VecDeque;
use std::sync::Arc;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyString, PyTuple};
use rustc_hash::FxHashMap;

use crate::metrics::FastCounter;

/// msgspec's "text" key in a chunk's map: its length byte and four letters.
const TEXT_KEY: i64 = 5;

/// The bytes msgpack puts before a string of `size` bytes.
fn str_header(size: i64) -> i64 {
    if size < 32 { 1 } else if size < 256 { 2 } else if size < 65536 { 3 } else { 5 }
}

/// The texts by content in the order they were last kept: a text kept again goes to the back, its old slot in the queue
/// left behind, skipped when it comes to the front and swept when stale slots outnumber live ones.
struct Entry {
    seq: u64, // its slot in the queue
    key: Arc<str>,
    string: Py<PyString>, // the string held
    size: i64,            // its UTF-8 bytes
}

#[derive(Default)]
struct Store {
    held: FxHashMap<Arc<str>, Entry>,
    order: VecDeque<(u64, Arc<str>)>,
    seq: u64,
}

impl Store {
    /// The held string of `text` and its bytes, now the most recently kept.
    fn touch(&mut self, py: Python<'_>, text: &str) -> Option<(Py<PyString>, i64)> {
        self.seq += 1;
        let seq = self.seq;
        let entry = self.held.get_mut(text)?;
        entry.seq = seq;
        let found = (entry.string.clone_ref(py), entry.size);
        self.order.push_back((seq, Arc::clone(&entry.key)));
        if self.order.len() > 2 * self.held.len() + 16 {
            let held = &self.held;
            self.order.retain(|(seq, key)| held.get(key).is_some_and(|entry| entry.seq == *seq));
        }
        Some(found)
    }

    fn insert(&mut self, text: &str, string: Py<PyString>, size: i64) {
        self.seq += 1;
        let key: Arc<str> = Arc::from(text);
        self.held.insert(Arc::clone(&key), Entry { seq: self.seq, key: Arc::clone(&key), string, size });
        self.order.push_back((self.seq, key));
    }

    /// The least recently kept text leaves; returns its bytes.
    fn pop_oldest(&mut self) -> Option<i64> {
        while let Some((seq, key)) = self.order.pop_front() {
            if self.held.get(&key).is_some_and(|entry| entry.seq == seq) {
                return self.held.remove(&key).map(|entry| entry.size);
            }
        }
        None
    }
}

#[pyclass(module = "ragpulse._native")]
pub struct KeptTexts {
    store: Store,
    max_texts: usize,
    max_bytes: i64,
    entry_bytes: i64, // what a held text costs besides its bytes
    evicted: Py<FastCounter>,
    encode_into: Py<PyAny>, // msgspec's msgpack encode_into(event, buffer)
    buffer: Py<PyByteArray>, // what it encodes into: one buffer for every event, not one grown for each
    held_bytes: i64,
}

impl KeptTexts {
    /// The string the store holds for `text` (or `text` itself when it is too big to hold), and its UTF-8 bytes.
    fn share(&mut self, text: &Bound<'_, PyString>) -> PyResult<(Py<PyString>, i64)> {
        let py = text.py();
        let content = text.to_str()?;
        if let Some(found) = self.store.touch(py, content) {
            return Ok(found);
        }
        let size = content.len() as i64;
        let cost = size + self.entry_bytes;
        if cost > self.max_bytes {
            return Ok((text.clone().unbind(), size)); // never shared: the event holds it alone
        }
        self.store.insert(content, text.clone().unbind(), size);
        self.held_bytes += cost;
        while self.store.held.len() > self.max_texts || self.held_bytes > self.max_bytes {
            let Some(gone) = self.store.pop_oldest() else { break };
            self.held_bytes -= gone + self.entry_bytes;
            self.evicted.get().add(1.0);
        }
        Ok((text.clone().unbind(), size))
    }
}

#[pymethods]
impl KeptTexts {
    #[new]
    fn new(max_texts: usize, max_bytes: i64, entry_bytes: i64, evicted: Py<FastCounter>, encode_into: Py<PyAny>,
           py: Python<'_>) -> Self {
        KeptTexts { store: Store::default(), max_texts, max_bytes, entry_bytes, evicted, encode_into,
                    buffer: PyByteArray::new(py, &[]).unbind(), held_bytes: 0 }
    }

    /// The event as it is kept, ((its msgpack without its attributes and its chunks' texts, the texts), its bytes: what
    /// msgpack makes of it with its texts). Its attributes and texts are taken off while it is encoded and put back.
    fn pack<'py>(&mut self, event: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyTuple>, i64)> {
        let py = event.py();
        let chunks = event.getattr(intern!(py, "chunks"))?;
        let mut texts: Vec<Option<Py<PyString>>> = Vec::new();
        let mut taken: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)> = Vec::new(); // (chunk, its text)
        let mut size = 0;
        if chunks.is_truthy()? {
            for chunk in chunks.try_iter()? {
                let chunk = chunk?;
                let text = chunk.getattr(intern!(py, "text"))?;
                if text.is_none() {
                    texts.push(None);
                    continue;
                }
                let (held, bytes) = self.share(text.cast::<PyString>()?)?;
                size += TEXT_KEY + str_header(bytes) + bytes;
                texts.push(Some(held));
                taken.push((chunk, text));
            }
        }
        let attributes = event.getattr(intern!(py, "attributes"))?;
        let without_attributes = attributes.is_truthy()?;
        if without_attributes {
            event.setattr(intern!(py, "attributes"), PyDict::new(py))?;
        }
        let mut encoded = taken.iter().try_for_each(|(chunk, _)| chunk.setattr(intern!(py, "text"), py.None()))
            .and_then(|()| self.encode_into.bind(py).call1((event, self.buffer.bind(py))));
        // Put back whatever happened (in reverse: a chunk listed twice gets its own text again).
        for (chunk, text) in taken.iter().rev() {
            let restored = chunk.setattr(intern!(py, "text"), text);
            encoded = encoded.and_then(|payload| restored.map(|()| payload));
        }
        if without_attributes {
            event.setattr(intern!(py, "attributes"), attributes)?;
        }
        // A copy of the bytes written is what a kept event holds (encode's own result is its whole write buffer, grown by
        // half each time it filled: ~1,260 bytes held for a realistic event's 760 until the join lets it go).
        encoded?;
        // SAFETY: no Python code runs while the slice is read (PyBytes::new copies it), so nothing resizes the buffer.
        let written = unsafe { self.buffer.bind(py).as_bytes() };
        let length = written.len() as i64;
        let payload = PyBytes::new(py, written).into_any();
        let kept = PyTuple::new(py, [payload, PyTuple::new(py, texts)?.into_any()])?;
        Ok((kept, length + size))
    }

    fn __len__(&self) -> usize {
        self.store.held.len()
    }

    /// The held texts' bytes, each with its entry's cost.
    #[getter]
    fn bytes(&self) -> i64 {
        self.held_bytes
    }

    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.encode_into)?;
        visit.call(&self.buffer)
    }
}
