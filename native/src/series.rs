//! A component's children per raw label set, as collector/telemetry/labels.py's SeriesCache keeps them for the
//! Python stages: made once through the guard (by the component's Python, given the raw values), then a dict lookup.
//! Bounded: raw values are unbounded, the series behind them are not (full, it starts again empty).
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
        let mut raw = Vec::with_capacity(self.labels.len());
        for name in &self.labels {
            raw.push(event.getattr(name.bind(py))?);
        }
        let raw = PyTuple::new(py, raw)?;
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
