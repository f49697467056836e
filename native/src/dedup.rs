//! ragpulse._native.DedupCore: the dedup window's test and its stage (collector/dedup.py says what the window holds
//! and why). The window stays the Python's OrderedDict of identity -> expiry, oldest first, so that anything else
//! reading it sees the same table; this is the per-event work on it, done through the mapping protocol (which keeps
//! the OrderedDict's order, where the dict API would not).
use pyo3::prelude::*;
use pyo3::types::PyType;
use pyo3::{intern, PyTraverseError, PyVisit};

#[pyclass(module = "ragpulse._native")]
pub struct DedupCore {
    expiry: Py<PyAny>, // OrderedDict[identity, expiry], the oldest first
    max_entries: usize,
    window: f64,
    clock: Py<PyAny>,
    evicted: Py<PyAny>,    // a prometheus_client Counter: forgotten early because the window was full
    trace_type: Py<PyType>,
    duplicates: [Py<PyAny>; 2], // prometheus_client Counters of duplicates: traces, feedback
}

#[pymethods]
impl DedupCore {
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(expiry: Py<PyAny>, max_entries: usize, window: f64, clock: Py<PyAny>, evicted: Py<PyAny>,
           trace_type: Py<PyType>, trace_duplicates: Py<PyAny>, feedback_duplicates: Py<PyAny>) -> Self {
        DedupCore { expiry, max_entries, window, clock, evicted, trace_type,
                    duplicates: [trace_duplicates, feedback_duplicates] }
    }

    /// True if `key` is in the window; otherwise remembers it (ending what expired, and the oldest when full) and
    /// returns False.
    fn seen_before(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let py = key.py();
        let now: f64 = self.clock.call0(py)?.extract(py)?;
        let expiry = self.expiry.bind(py);
        if expiry.contains(key)? {
            if expiry.get_item(key)?.extract::<f64>()? > now {
                return Ok(true);
            }
            expiry.del_item(key)?;
        }
        loop {
            let Some(oldest) = expiry.try_iter()?.next() else { break };
            let oldest = oldest?;
            if expiry.get_item(&oldest)?.extract::<f64>()? > now {
                break;
            }
            expiry.del_item(&oldest)?;
        }
        if expiry.len()? >= self.max_entries {
            expiry.call_method1(intern!(py, "popitem"), (false,))?;
            self.evicted.call_method0(py, intern!(py, "inc"))?;
        }
        expiry.set_item(key, now + self.window)?;
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

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        for held in [&self.expiry, &self.clock, &self.evicted] {
            visit.call(held)?;
        }
        visit.call(&self.duplicates[0])?;
        visit.call(&self.duplicates[1])
    }
}
