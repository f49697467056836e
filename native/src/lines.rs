//! ragpulse._native.TraceLines: an NDJSON body's lines to envelopes (collector/decode.py `_decode_lines`). The body
//! is cut into lines here, each line is decoded by msgspec (which type-checks it), and a trace that needs nothing but
//! the defaults (its timestamp and its chunks' dates in range, nothing over a limit, flat attributes, no context)
//! is normalised and put in its envelope here; every other event, and every line msgspec refuses, goes back to the
//! Python, which decides it as it always did. This ran for every event: the loop, the limits' checks and the
//! envelope's call were half of "decode and validate" besides msgspec's own work.
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFloat, PyList, PyMemoryView, PyString, PyTuple, PyType};
use pyo3::{intern, PyTraverseError, PyVisit};

use crate::fields::Field;

/// Epoch milliseconds between 1973 and 5138 (collector/decode.py `_MIN_EPOCH_MS`, `_MAX_EPOCH_MS`).
const MIN_EPOCH_MS: f64 = 1e11;
const MAX_EPOCH_MS: f64 = 1e14;

/// What `bytes.isspace()` counts as whitespace, "\n" and "\r" aside (they end lines).
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|byte| matches!(byte, b' ' | b'\t' | b'\x0b' | b'\x0c'))
}

/// The lines of `body` as `bytes.splitlines()` cuts them (at "\n", "\r" or "\r\n"): (start, end) of each.
fn lines(body: &[u8]) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut start = 0;
    while start < body.len() {
        // memchr2 reads the line a word at a time: a byte-by-byte search was a sixth of decoding a 2 KB line.
        let end = memchr::memchr2(b'\n', b'\r', &body[start..]).map_or(body.len(), |at| start + at);
        found.push((start, end));
        start = if body.get(end) == Some(&b'\r') && body.get(end + 1) == Some(&b'\n') { end + 2 } else { end + 1 };
    }
    found
}

/// An epoch-milliseconds float in range, in seconds; None for anything else (the Python path converts or refuses it).
fn epoch_seconds(value: &Bound<'_, PyAny>) -> Option<f64> {
    let millis = value.cast_exact::<PyFloat>().ok()?.value();
    (MIN_EPOCH_MS..=MAX_EPOCH_MS).contains(&millis).then_some(millis / 1000.0)
}

/// A chunk within the limits: the rank it takes (None: it has one), its date in seconds (None: it has none), the chunk.
type ChunkDefaults<'py> = (Option<usize>, Option<f64>, Bound<'py, PyAny>);

/// The fields read of every trace (collector/events.py TraceEvent), at their slots.
struct TraceFields {
    trace_id: Field,
    query: Field,
    answer: Field,
    timestamp: Field,
    route: Field,
    intent: Field,
    chunks: Field,
    attributes: Field,
    context: Field,
}

/// The fields read of every chunk (collector/events.py Chunk), at their slots.
struct ChunkFields {
    text: Field,
    rank: Field,
    updated_at: Field,
}

#[pyclass(module = "ragpulse._native")]
pub struct TraceLines {
    trace_type: Py<PyType>,
    trace: TraceFields,
    chunk: ChunkFields,
    envelope_type: Py<PyAny>,
    source: Py<PyString>,
    item_errors: Py<PyTuple>, // what makes a line a rejection (collector/decode.py `_ITEM_ERRORS`)
    limits: [usize; 6], // max_event_bytes, max_query_chars, max_answer_chars, max_attributes, max_chunks, max_chunk_chars
}

impl TraceLines {
    /// The chunks' defaults when every chunk is within the limits (None: one is not). Nothing is set here.
    fn chunks<'py>(&self, chunks: &Bound<'py, PyAny>) -> PyResult<Option<Vec<ChunkDefaults<'py>>>> {
        let [_, _, _, _, max_chunks, max_chunk_chars] = self.limits;
        let Ok(list) = chunks.cast::<PyList>() else { return Ok(None) };
        if list.len() > max_chunks {
            return Ok(None);
        }
        let mut defaults = Vec::with_capacity(list.len());
        for (position, chunk) in list.iter().enumerate() {
            let text = self.chunk.text.get(&chunk)?;
            if !text.is_none() && text.len()? > max_chunk_chars {
                return Ok(None);
            }
            let updated = self.chunk.updated_at.get(&chunk)?;
            let updated = if updated.is_none() { None } else {
                let Some(seconds) = epoch_seconds(&updated) else { return Ok(None) };
                Some(seconds)
            };
            let rank = self.chunk.rank.get(&chunk)?.is_none().then_some(position);
            defaults.push((rank, updated, chunk));
        }
        Ok(Some(defaults))
    }

    /// The trace's envelope when it needs nothing but the defaults (collector/decode.py `_trace_envelope` without a
    /// limit crossed or an error); None, the event untouched, when the Python path must decide it.
    fn envelope<'py>(&self, event: &Bound<'py, PyAny>, received_at: &Bound<'py, PyFloat>, size: usize)
                     -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = event.py();
        let [_, max_query, max_answer, max_attributes, _, _] = self.limits;
        let fields = &self.trace;
        let timestamp = fields.timestamp.get(event)?;
        // received_at is the one float of the body, as the Python gives it to every envelope and default.
        let timestamp = if timestamp.is_none() { received_at.clone().into_any() } else {
            let Some(seconds) = epoch_seconds(&timestamp) else { return Ok(None) };
            PyFloat::new(py, seconds).into_any()
        };
        let answer = fields.answer.get(event)?;
        if fields.query.get(event)?.len()? > max_query || answer.is_none() || answer.len()? > max_answer
            || fields.context.get(event)?.is_truthy()? {
            return Ok(None);
        }
        let attributes = fields.attributes.get(event)?;
        let Ok(attributes) = attributes.cast::<PyDict>() else { return Ok(None) };
        if attributes.len() > max_attributes
            || attributes.values().iter().any(|value| value.is_exact_instance_of::<PyDict>() || value.is_exact_instance_of::<PyList>()) {
            return Ok(None); // over the limit, or nested: the Python path cuts or measures it
        }
        let chunks = fields.chunks.get(event)?;
        let defaults = if chunks.is_none() { Vec::new() } else {
            let Some(defaults) = self.chunks(&chunks)? else { return Ok(None) };
            defaults
        };
        fields.timestamp.set(event, timestamp)?;
        if fields.route.get(event)?.is_none() {
            fields.route.set(event, fields.intent.get(event)?)?;
        }
        for (rank, updated, chunk) in defaults {
            if let Some(rank) = rank {
                self.chunk.rank.set(&chunk, rank.into_pyobject(py)?.into_any())?;
            }
            if let Some(updated) = updated {
                self.chunk.updated_at.set(&chunk, PyFloat::new(py, updated).into_any())?;
            }
        }
        // The dedup key: collector/dedup.py `event_identity` of a trace, hash("t\x00" + trace_id).
        let identity = intern!(py, "t\x00").add(fields.trace_id.get(event)?)?.hash()?;
        let empty = PyTuple::empty(py);
        let envelope = self.envelope_type.bind(py).call1((event, self.source.bind(py), received_at, identity, empty, size))?;
        Ok(Some(envelope))
    }
}

#[pymethods]
impl TraceLines {
    #[new]
    fn new(trace_type: Bound<'_, PyType>, chunk_type: Bound<'_, PyType>, envelope_type: Py<PyAny>, source: Py<PyString>,
           item_errors: Py<PyTuple>, limits: [usize; 6]) -> PyResult<Self> {
        let field = |name| Field::of(&trace_type, name);
        let trace = TraceFields {
            trace_id: field("trace_id")?, query: field("query")?, answer: field("answer")?, timestamp: field("timestamp")?,
            route: field("route")?, intent: field("intent")?, chunks: field("chunks")?, attributes: field("attributes")?,
            context: field("context")?,
        };
        let chunk = ChunkFields {
            text: Field::of(&chunk_type, "text")?, rank: Field::of(&chunk_type, "rank")?,
            updated_at: Field::of(&chunk_type, "updated_at")?,
        };
        Ok(TraceLines { trace_type: trace_type.unbind(), trace, chunk, envelope_type, source, item_errors, limits })
    }

    /// Each line of `body` (an NDJSON body) decoded by `decode`: a trace within the limits appended to `envelopes`,
    /// any other event handed to `other(index, line, event)`, and `reject(index, error)` for a line `decode` refused
    /// with one of the item errors (any other exception propagates). Blank lines are skipped; `index` counts every line.
    fn decode<'py>(&self, decode: &Bound<'py, PyAny>, body: &Bound<'py, PyBytes>, received_at: &Bound<'py, PyFloat>,
                   envelopes: &Bound<'py, PyList>, other: &Bound<'py, PyAny>, reject: &Bound<'py, PyAny>) -> PyResult<()> {
        let py = body.py();
        let view = PyMemoryView::from(body.as_any())?;
        let trace_type = self.trace_type.bind(py);
        let item_errors = self.item_errors.bind(py);
        for (index, (start, end)) in lines(body.as_bytes()).into_iter().enumerate() {
            if is_blank(&body.as_bytes()[start..end]) {
                continue; // also the empty line
            }
            // A view of the body, not a copy of its bytes (as the Python's lines were).
            let line = view.get_item(crate::bridge::slice(py, start, end)?)?;
            let event = match decode.call1((&line,)) {
                Ok(event) => event,
                Err(error) if error.is_instance(py, item_errors) => {
                    reject.call1((index, error.value(py)))?;
                    continue;
                }
                Err(error) => return Err(error),
            };
            let size = end - start;
            let envelope = if event.get_type().is(trace_type) && size <= self.limits[0] {
                self.envelope(&event, received_at, size)?
            } else {
                None
            };
            match envelope {
                Some(envelope) => envelopes.append(envelope)?,
                None => { other.call1((index, line, event))?; }
            }
        }
        Ok(())
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.trace_type)?;
        let TraceFields { trace_id, query, answer, timestamp, route, intent, chunks, attributes, context } = &self.trace;
        let ChunkFields { text, rank, updated_at } = &self.chunk;
        for field in [trace_id, query, answer, timestamp, route, intent, chunks, attributes, context, text, rank, updated_at] {
            field.traverse(&visit)?; // each holds its type
        }
        visit.call(&self.envelope_type)?;
        visit.call(&self.item_errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_cut_as_splitlines_cuts_them() {
        let body = b"a\nb\r\nc\rd\n\ne";
        let cut: Vec<&[u8]> = lines(body).into_iter().map(|(start, end)| &body[start..end]).collect();
        assert_eq!(cut, vec![&b"a"[..], b"b", b"c", b"d", b"", b"e"]);
        assert_eq!(lines(b"a\n"), vec![(0, 1)]);
        assert_eq!(lines(b"\r\n\r\n"), vec![(0, 0), (2, 2)]);
        assert!(lines(b"").is_empty());
    }

    #[test]
    fn blank_is_what_isspace_counts() {
        assert!(is_blank(b""));
        assert!(is_blank(b" \t\x0b\x0c"));
        assert!(!is_blank(b" {}"));
        assert!(!is_blank(b"\xa0"));
    }
}
