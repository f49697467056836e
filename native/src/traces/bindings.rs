//! ragpulse._native.Turn and TraceTable: an answer the feedback join holds (feedback/tables.py documents its fields)
//! and the join's trace table, as feedback/join.py drives them. A Turn is shared by the table, its session's open
//! turns and the listeners (the judge sampler and the golden-set candidates read and write its attributes). It holds
//! strings, tuples and bytes only (its kept event too: feedback/kept.py; no reference cycle), so it is kept out of the garbage collector, as the msgspec
//! struct it replaced was (gc=False): tracked, tens of thousands of them and every tuple holding one (a session's
//! turns, the reorder hold's entries) made each of the collector's passes walk them all (the join 35% slower). Only
//! the table makes one.
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::intern;
use pyo3::types::{PyString, PyTuple};
use rustc_hash::FxHashSet;

use super::{Ordered, Tombstones};
use crate::metrics::FastCounter;

#[pyclass(module = "ragpulse._native", get_all, set_all)]
pub struct Turn {
    trace_id: Py<PyString>,
    pub(crate) at: f64,
    labels: Py<PyAny>,
    pub(crate) fallback: bool,
    size: i64,
    pub(crate) signals: Py<PyAny>,
    judgment: Py<PyAny>,
    payload: Option<Py<PyAny>>,
    payload_size: i64,
    kept: bool,
    evidence: bool,
    sampled_by: Py<PyAny>,
    pub(crate) raised: Py<PyAny>,
    pub(crate) open: bool,
    pub(crate) kind: Py<PyAny>,
    pub(crate) partition: i64,
}

impl Turn {
    /// A new answer, out of the garbage collector's lists.
    fn untracked(py: Python<'_>, trace_id: Py<PyString>, at: f64, labels: Py<PyAny>, fallback: bool, size: i64,
                 partition: i64) -> PyResult<Py<Turn>> {
        let empty = PyTuple::empty(py).into_any().unbind();
        let turn = Py::new(py, Turn { trace_id, at, labels, fallback, size, signals: empty.clone_ref(py),
                                      judgment: py.None(), payload: None, payload_size: 0, kept: false, evidence: false,
                                      sampled_by: empty.clone_ref(py), raised: empty, open: false, kind: py.None(),
                                      partition })?;
        // SAFETY: a live object of a type with Py_TPFLAGS_HAVE_GC (every pyclass), held here; untracking only takes it
        // out of the collector's lists (its deallocation untracks again, which is allowed).
        unsafe { pyo3::ffi::PyObject_GC_UnTrack(turn.as_ptr().cast()) };
        Ok(turn)
    }

    /// Its kept event goes; returns its bytes.
    fn drop_payload(&mut self) -> i64 {
        if self.payload.take().is_none() {
            return 0;
        }
        let size = std::mem::take(&mut self.payload_size);
        self.size -= size;
        size
    }
}

unsafe extern "C" fn never_collected(_: *mut pyo3::ffi::PyObject) -> std::os::raw::c_int {
    0
}

/// Turns are no objects of the collector's (every pyclass's type has Py_TPFLAGS_HAVE_GC, which PyO3 keeps): a tuple
/// holding only them and strings is untracked on the collector's next pass, as with the msgspec struct's.
pub fn keep_turns_out_of_the_collector(py: Python<'_>) {
    let turn = py.get_type::<Turn>();
    // SAFETY: the type object is alive (the module holds it) and not yet instantiated; tp_is_gc only tells the
    // collector to skip an instance, which it may since a Turn holds no reference cycle. Allocation and deallocation
    // go by the type's flags, so the GC header is there for PyO3's deallocation as ever.
    unsafe { (*turn.as_type_ptr()).tp_is_gc = Some(never_collected) };
}

#[pyclass(module = "ragpulse._native")]
pub struct TraceTable {
    traces: Ordered<Py<Turn>>,
    tombstones: Tombstones,
    max_traces: usize,
    max_bytes: i64,
    entry_bytes: i64,
    held: i64,
    evicted: Py<FastCounter>,
}

impl TraceTable {
    /// The turn leaves the table, and its kept event with it: its session may still hold the turn, but the bytes
    /// budget no longer counts it.
    fn release(&mut self, py: Python<'_>, turn: &Py<Turn>) {
        let mut turn = turn.borrow_mut(py);
        self.held -= turn.size;
        turn.drop_payload();
    }

    /// The trace leaves the window: feedback about it from now on is late.
    fn bury(&mut self, py: Python<'_>, turn: Py<Turn>) {
        self.release(py, &turn);
        self.tombstones.bury(turn.borrow(py).trace_id.bind(py).to_str().unwrap_or_default());
    }

    fn cap(&mut self, py: Python<'_>) {
        while self.traces.len() > self.max_traces || self.held > self.max_bytes {
            let Some(turn) = self.traces.pop_first() else { break };
            self.bury(py, turn);
            self.evicted.get().add(1.0);
        }
    }
}

#[pymethods]
impl TraceTable {
    #[new]
    fn new(max_traces: usize, max_bytes: i64, entry_bytes: i64, evicted: Py<FastCounter>) -> Self {
        TraceTable { traces: Ordered::default(), tombstones: Tombstones::new(max_traces), max_traces, max_bytes,
                     entry_bytes, held: 0, evicted }
    }

    /// A new answer, the newest (the one it replaces, the same trace sent again, leaves with its kept event).
    pub(crate) fn add(&mut self, py: Python<'_>, trace_id: Bound<'_, PyString>, at: f64, labels: Py<PyAny>, fallback: bool,
           partition: i64) -> PyResult<Py<Turn>> {
        let size = self.entry_bytes + trace_id.len()? as i64;
        let turn = Turn::untracked(py, trace_id.clone().unbind(), at, labels, fallback, size, partition)?;
        if let Some(previous) = self.traces.insert(trace_id.to_str()?, turn.clone_ref(py)) {
            self.release(py, &previous);
        }
        self.held += size;
        if self.traces.len() > self.max_traces || self.held > self.max_bytes {
            self.cap(py);
        }
        Ok(turn)
    }

    fn get(&self, py: Python<'_>, trace_id: &str) -> Option<Py<Turn>> {
        self.traces.get(trace_id).map(|turn| turn.clone_ref(py))
    }

    fn __getitem__(&self, py: Python<'_>, trace_id: &str) -> PyResult<Py<Turn>> {
        self.get(py, trace_id).ok_or_else(|| PyKeyError::new_err(trace_id.to_owned()))
    }

    fn __contains__(&self, trace_id: &str) -> bool {
        self.traces.get(trace_id).is_some()
    }

    fn __len__(&self) -> usize {
        self.traces.len()
    }

    /// The trace ids, oldest first.
    fn __iter__(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let ids: Vec<&str> = self.traces.iter().map(|(key, _)| key).collect();
        Ok(PyTuple::new(py, ids)?.into_any().try_iter()?.into_any().unbind())
    }

    /// The trace left the window (or the table's caps): feedback about it is late.
    fn buried(&self, trace_id: &str) -> bool {
        self.tombstones.holds(trace_id)
    }

    /// Answers older than `window` seconds at `now` leave.
    fn expire(&mut self, py: Python<'_>, now: f64, window: f64) {
        while self.traces.first().is_some_and(|turn| now - turn.borrow(py).at >= window) {
            let turn = self.traces.pop_first().expect("the first answer");
            self.bury(py, turn);
        }
    }

    /// The answers of these Kafka partitions leave (another replica owns them now); returns how many.
    fn revoke(&mut self, py: Python<'_>, partitions: FxHashSet<i64>) -> usize {
        let gone: Vec<String> = self.traces.iter()
            .filter(|(_, turn)| partitions.contains(&turn.borrow(py).partition))
            .map(|(key, _)| key.to_owned())
            .collect();
        for key in &gone {
            let turn = self.traces.remove(key).expect("a held answer");
            self.release(py, &turn);
        }
        gone.len()
    }

    /// The judge sampler kept the answer's event (`payload`, as feedback/kept.py holds it, `size` bytes): it counts in
    /// the table's bytes.
    fn keep(&mut self, py: Python<'_>, turn: &Bound<'_, Turn>, payload: Py<PyAny>, size: i64, sampled_by: Py<PyAny>) {
        // A second keep of the same answer replaces its kept event: its bytes are counted once
        let grown = {
            let mut held = turn.borrow_mut();
            let replaced = if held.payload.is_some() { held.payload_size } else { 0 };
            held.payload = Some(payload);
            held.payload_size = size;
            held.kept = true;
            held.sampled_by = sampled_by;
            held.size += size - replaced;
            size - replaced
        };
        self.held += grown;
        if self.held > self.max_bytes {
            self.cap(py);
        }
    }

    /// The judge sampler saw this (judgeable) trace: its event is kept for late signals as `pack` makes it (the kept
    /// form and its bytes: feedback/kept.py, without its attributes, its chunks' texts held once). Returns its
    /// answer's turn (None when it already left).
    pub(crate) fn keep_event(slf: &Bound<'_, Self>, event: &Bound<'_, PyAny>, sampled_by: Py<PyAny>,
                             pack: &Bound<'_, PyAny>) -> PyResult<Option<Py<Turn>>> {
        let py = slf.py();
        let trace_id = event.getattr(intern!(py, "trace_id"))?;
        let Some(turn) = slf.borrow().get(py, trace_id.cast::<PyString>()?.to_str()?) else { return Ok(None) };
        let (payload, size): (Py<PyAny>, i64) = pack.call1((event,))?.extract()?;
        slf.borrow_mut().keep(py, turn.bind(py), payload, size, sampled_by);
        Ok(Some(turn))
    }

    /// The sampler saw the trace and did not keep it.
    fn passed(&self, py: Python<'_>, trace_id: &str) {
        if let Some(turn) = self.traces.get(trace_id) {
            let mut turn = turn.borrow_mut(py);
            turn.kept = true;
            turn.raised = PyTuple::empty(py).into_any().unbind();
        }
    }

    /// The answer's kept event and its bytes, once (it is evidence now); None when it was not kept or is gone.
    fn take(&mut self, py: Python<'_>, turn: &Bound<'_, Turn>) -> Option<(Py<PyAny>, i64)> {
        let mut held = turn.borrow_mut();
        let taken = (held.payload.as_ref()?.clone_ref(py), held.payload_size);
        held.evidence = true;
        self.held -= held.drop_payload(); // a turn with its payload is in the table (release drops it)
        Some(taken)
    }

    #[getter]
    fn bytes(&self) -> i64 {
        self.held
    }

    #[getter]
    fn tombstones(&self) -> usize {
        self.tombstones.len()
    }
}
