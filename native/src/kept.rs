//! ragpulse._native.KeptTexts: the form of the events the feedback join keeps for late signals, their chunks' texts
//! held once (feedback/kept.py says why and what `pack` returns; it held this in Python, for every judgeable trace).
//! The store of texts is capped in entries and bytes, the least recently kept text going first, counted.
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyString, PyTuple, PyType};

use crate::fields::Field;

use crate::metrics::FastCounter;
use crate::traces::Ordered;

/// msgspec's "text" key in a chunk's map: its length byte and four letters.
const TEXT_KEY: i64 = 5;

/// The bytes msgpack puts before a string of `size` bytes.
fn str_header(size: i64) -> i64 {
    if size < 32 { 1 } else if size < 256 { 2 } else if size < 65536 { 3 } else { 5 }
}

#[pyclass(module = "ragpulse._native")]
pub struct KeptTexts {
    // The strings held by content and their UTF-8 bytes, in the order they were last kept: a text kept again moves
    // to the back in one lookup (a queue with stale slots swept now and then did it in two, and a sweep).
    store: Ordered<(Py<PyString>, i64)>,
    max_texts: usize,
    max_bytes: i64,
    entry_bytes: i64, // what a held text costs besides its bytes
    evicted: Py<FastCounter>,
    encode_into: Py<PyAny>, // msgspec's msgpack encode_into(event, buffer)
    buffer: Py<PyByteArray>, // what it encodes into: one buffer for every event, not one grown for each
    held_bytes: i64,
    // An event's chunks and attributes and a chunk's text, at their slots (native/src/fields.rs).
    chunks: Field,
    attributes: Field,
    text: Field,
}

impl KeptTexts {
    /// The string the store holds for `text` (or `text` itself when it is too big to hold), and its UTF-8 bytes.
    fn share(&mut self, text: &Bound<'_, PyString>) -> PyResult<(Py<PyString>, i64)> {
        let py = text.py();
        let content = text.to_str()?;
        if let Some((string, size)) = self.store.touch(content) {
            return Ok((string.clone_ref(py), *size));
        }
        let size = content.len() as i64;
        let cost = size + self.entry_bytes;
        if cost > self.max_bytes {
            return Ok((text.clone().unbind(), size)); // never shared: the event holds it alone
        }
        self.store.insert(content, (text.clone().unbind(), size));
        self.held_bytes += cost;
        while self.store.len() > self.max_texts || self.held_bytes > self.max_bytes {
            let Some((_, gone)) = self.store.pop_first() else { break };
            self.held_bytes -= gone + self.entry_bytes;
            self.evicted.get().add(1.0);
        }
        Ok((text.clone().unbind(), size))
    }
}

#[pymethods]
impl KeptTexts {
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(max_texts: usize, max_bytes: i64, entry_bytes: i64, evicted: Py<FastCounter>, encode_into: Py<PyAny>,
           trace_type: &Bound<'_, PyType>, chunk_type: &Bound<'_, PyType>, py: Python<'_>) -> PyResult<Self> {
        Ok(KeptTexts { store: Ordered::default(), max_texts, max_bytes, entry_bytes, evicted, encode_into,
                       buffer: PyByteArray::new(py, &[]).unbind(), held_bytes: 0,
                       chunks: Field::of(trace_type, "chunks")?, attributes: Field::of(trace_type, "attributes")?,
                       text: Field::of(chunk_type, "text")? })
    }

    /// The event as it is kept, ((its msgpack without its attributes and its chunks' texts, the texts), its bytes: what
    /// msgpack makes of it with its texts). Its attributes and texts are taken off while it is encoded and put back.
    fn pack<'py>(&mut self, event: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyTuple>, i64)> {
        let py = event.py();
        let chunks = self.chunks.get(event)?;
        let mut texts: Vec<Option<Py<PyString>>> = Vec::new();
        let mut taken: Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)> = Vec::new(); // (chunk, its text)
        let mut size = 0;
        if chunks.is_truthy()? {
            for chunk in chunks.try_iter()? {
                let chunk = chunk?;
                let text = self.text.get(&chunk)?;
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
        let attributes = self.attributes.get(event)?;
        let without_attributes = attributes.is_truthy()?;
        if without_attributes {
            self.attributes.set(event, PyDict::new(py).into_any())?;
        }
        let mut encoded = taken.iter().try_for_each(|(chunk, _)| self.text.set(chunk, py.None().into_bound(py)))
            .and_then(|()| self.encode_into.bind(py).call1((event, self.buffer.bind(py))));
        // Put back whatever happened (in reverse: a chunk listed twice gets its own text again).
        for (chunk, text) in taken.iter().rev() {
            let restored = self.text.set(chunk, text.clone());
            encoded = encoded.and_then(|payload| restored.map(|()| payload));
        }
        if without_attributes {
            self.attributes.set(event, attributes)?;
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
        self.store.len()
    }

    /// The held texts' bytes, each with its entry's cost.
    #[getter]
    fn bytes(&self) -> i64 {
        self.held_bytes
    }

    fn __traverse__(&self, visit: pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.encode_into)?;
        for field in [&self.chunks, &self.attributes, &self.text] {
            field.traverse(&visit)?;
        }
        visit.call(&self.buffer)
    }
}
