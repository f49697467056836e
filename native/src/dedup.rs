//! ragpulse._native.DedupCore: the dedup window and its stage (collector/dedup.py says what the window holds and
//! why). Identities leave in the order they came (one window for all, so expiry follows arrival): a ring of
//! (identity, expiry) beside a map from identity to expiry. Both are sized for the cap once, so the window never
//! reallocates: a Python dict that every event enters and the oldest leaves rebuilt its table every ~250,000
//! inserts, ~10 MB a time, which stayed in the heap as free space (docs/benchmarks-log.md, the soak's leak).
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use pyo3::prelude::*;
use pyo3::types::{PyInt, PyType};
use pyo3::{intern, PyTraverseError, PyVisit};
use rustc_hash::FxBuildHasher;

use crate::metrics::FastCounter;

#[pyclass(frozen, module = "ragpulse._native")]
pub struct DedupCore {
    // The ring holds, oldest first, each identity with the expiry it entered with; an identity seen again after its
    // expiry has entered again, and its old place is stale (the map's expiry differs) until it leaves the front.
    // Shared by the window's core and its stage's (`sharing`), which sources and the pipeline call from their
    // threads; no Python runs while it is held.
    arrivals: Arc<Mutex<Window>>,
    max_entries: usize,
    window: f64,
    clock: Py<PyAny>,
    evicted: Py<FastCounter>, // forgotten early because the window was full: once full, every new identity
    trace_type: Py<PyType>,
    duplicates: [Py<PyAny>; 2], // prometheus_client Counters of duplicates: traces, feedback
}

struct Window {
    ring: VecDeque<(i64, f64)>,
    expiry: HashMap<i64, f64, FxBuildHasher>,
}

impl Window {
    fn with_cap(max_entries: usize) -> Self {
        // Twice the cap: the map's deleted slots are then cleaned in place, never by a larger table.
        Window { ring: VecDeque::with_capacity(max_entries + 1),
                 expiry: HashMap::with_capacity_and_hasher(2 * (max_entries + 1), FxBuildHasher) }
    }

    fn live(&self, key: i64, expiry: f64) -> bool {
        self.expiry.get(&key) == Some(&expiry)
    }

    /// The oldest live identity leaves (stale places before it with it); whether one did.
    fn pop_oldest(&mut self, unless_after: Option<f64>) -> bool {
        while let Some(&(key, expiry)) = self.ring.front() {
            if self.live(key, expiry) {
                if unless_after.is_some_and(|now| expiry > now) {
                    return false;
                }
                self.expiry.remove(&key);
                self.ring.pop_front();
                return true;
            }
            self.ring.pop_front();
        }
        false
    }
}

/// An identity as the window keys it: the int itself (event_identity's 64-bit digest), else the object's hash.
fn identity(key: &Bound<'_, PyAny>) -> PyResult<i64> {
    if key.is_instance_of::<PyInt>() {
        if let Ok(value) = key.extract::<i64>() {
            return Ok(value);
        }
    }
    Ok(key.hash()? as i64)
}

impl DedupCore {
    fn held(&self) -> MutexGuard<'_, Window> {
        self.arrivals.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[pymethods]
impl DedupCore {
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(max_entries: usize, window: f64, clock: Py<PyAny>, evicted: Py<FastCounter>, trace_type: Py<PyType>,
           trace_duplicates: Py<PyAny>, feedback_duplicates: Py<PyAny>) -> Self {
        DedupCore { arrivals: Arc::new(Mutex::new(Window::with_cap(max_entries))), max_entries, window, clock,
                    evicted, trace_type, duplicates: [trace_duplicates, feedback_duplicates] }
    }

    /// A core on the same window whose stage counts its duplicates on these Counters.
    fn sharing(&self, py: Python<'_>, trace_duplicates: Py<PyAny>, feedback_duplicates: Py<PyAny>) -> Self {
        DedupCore { arrivals: Arc::clone(&self.arrivals), max_entries: self.max_entries, window: self.window,
                    clock: self.clock.clone_ref(py), evicted: self.evicted.clone_ref(py),
                    trace_type: self.trace_type.clone_ref(py), duplicates: [trace_duplicates, feedback_duplicates] }
    }

    /// True if `key` is in the window; otherwise remembers it (ending what expired, and the oldest when full) and
    /// returns False.
    fn seen_before(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let py = key.py();
        let key = identity(key)?;
        let now: f64 = self.clock.call0(py)?.extract(py)?;
        let evicted = {
            let mut window = self.held();
            if let Some(&expiry) = window.expiry.get(&key) {
                if expiry > now {
                    return Ok(true);
                }
                window.expiry.remove(&key);
            }
            while window.pop_oldest(Some(now)) {}
            let full = window.expiry.len() >= self.max_entries;
            if full {
                window.pop_oldest(None);
            }
            window.expiry.insert(key, now + self.window);
            window.ring.push_back((key, now + self.window));
            full
        };
        if evicted {
            self.evicted.get().add(1.0);
        }
        Ok(false)
    }

    /// The stage: an event whose identity is still in the window is dropped (None), counted by its type.
    fn process<'py>(&self, envelope: Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = envelope.py();
        if !self.seen_before(&envelope.getattr(intern!(py, "identity"))?)? {
            return Ok(Some(envelope));
        }
        let trace = envelope.getattr(intern!(py, "event"))?.is_instance(self.trace_type.bind(py))?;
        self.duplicates[usize::from(!trace)].call_method0(py, intern!(py, "inc"))?;
        Ok(None)
    }

    fn __len__(&self) -> usize {
        self.held().expiry.len()
    }

    /// The identities held and their expiries, oldest first.
    fn items(&self) -> Vec<(i64, f64)> {
        let window = self.held();
        window.ring.iter().copied().filter(|&(key, expiry)| window.live(key, expiry)).collect()
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.clock)?;
        visit.call(&self.evicted)?;
        visit.call(&self.duplicates[0])?;
        visit.call(&self.duplicates[1])
    }
}
