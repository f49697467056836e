//! A component's children per raw label set, as collector/telemetry/labels.py's SeriesCache keeps them for the
//! Python stages: made once through the guard (by the component's Python, given the raw values), then a dict lookup.
//! Bounded: raw values are unbounded, the series behind them are not (full, it starts again empty).
use std::cell::RefCell;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};

type Made<'py> = Bound<'py, PyAny>;

pub struct RawSeries {
    labels: Vec<Py<PyString>>, // the label names, as the guard reads an event's raw values
    cached: Py<PyDict>,        // raw label values -> what `make` made of them
    max_entries: usize,
}

impl RawSeries {
    pub fn new(py: Python<'_>, labels: Vec<Py<PyString>>, max_entries: usize) -> Self {
        RawSeries { labels, cached: PyDict::new(py).unbind(), max_entries }
    }

    /// The event's, made by `make` from its raw label values when not cached.
    pub fn of<'py>(&self, event: &Bound<'py, PyAny>, make: impl FnOnce(&Bound<'py, PyTuple>) -> PyResult<Made<'py>>)
                   -> PyResult<Made<'py>> {
        let py = event.py();
        let raw = raw_labels(event, &self.labels)?;
        let cached = self.cached.bind(py);
        if let Some(found) = cached.get_item(&raw)? {
            return Ok(found);
        }
        if cached.len() >= self.max_entries {
            cached.clear();
        }
        let made = make(&raw)?;
        cached.set_item(&raw, &made)?;
        Ok(made)
    }

    pub fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.cached)
    }
}

/// The raw label values of the event the pipeline's loop is on, read once for the stages and the exporter that each
/// read them (the join, the sampler, the citations, the local scorers, the exporter: five times 7 attributes and a
/// tuple an event). Only inside `run_stages` (a `Scope`), for one envelope at a time, and for the event object itself
/// (held, so its address is not another's): no stage sets a label attribute (only decoding does, before).
struct Memo {
    event: Py<PyAny>,
    names: Vec<usize>, // the label names' objects (every component's are the guard's)
    raw: Py<PyTuple>,
}

thread_local! {
    // None: no pipeline loop on this thread; Some(None): one, on an envelope whose labels were not read yet.
    static MEMO: RefCell<Option<Option<Memo>>> = const { RefCell::new(None) };
}

/// While alive, the raw labels read are remembered for the envelope the loop is on (`next` starts another).
pub struct Scope;

impl Scope {
    pub fn enter() -> Scope {
        replace_memo(Some(None));
        Scope
    }

    /// The loop goes on to another envelope: what was read for the last one is forgotten.
    pub fn next(&self) {
        replace_memo(Some(None));
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        replace_memo(None);
    }
}

/// The memo set to `state`; the one it held dropped after the borrow ends (a decref may run Python, which may read labels).
fn replace_memo(state: Option<Option<Memo>>) {
    let old = MEMO.with(|memo| memo.replace(state));
    drop(old);
}

fn same_names(held: &[usize], names: &[Py<PyString>]) -> bool {
    held.len() == names.len() && held.iter().zip(names).all(|(held, name)| *held == name.as_ptr() as usize)
}

/// The event's values of the label `names`, as a tuple (the one read already for this envelope when there is one).
pub fn raw_labels<'py>(event: &Bound<'py, PyAny>, names: &[Py<PyString>]) -> PyResult<Bound<'py, PyTuple>> {
    let py = event.py();
    let held = MEMO.with(|memo| match &*memo.borrow() {
        Some(Some(memo)) if memo.event.is(event) && same_names(&memo.names, names) => Some(memo.raw.clone_ref(py)),
        _ => None,
    });
    if let Some(raw) = held {
        return Ok(raw.into_bound(py));
    }
    let mut values = Vec::with_capacity(names.len());
    for name in names {
        values.push(event.getattr(name.bind(py))?);
    }
    let raw = PyTuple::new(py, values)?;
    let old = MEMO.with(|memo| match &mut *memo.borrow_mut() {
        Some(slot) => slot.replace(Memo { event: event.clone().unbind(), raw: raw.clone().unbind(),
                                          names: names.iter().map(|name| name.as_ptr() as usize).collect() }),
        None => None,
    });
    drop(old);
    Ok(raw)
}
