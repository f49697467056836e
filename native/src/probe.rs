//! ragpulse._native.ProbeCore: the probe traffic filter's stage (probes/marker.py says what a probe event is and why it
//! leaves first): an event whose attributes hold the probe attribute is dropped, handed to `dropped` (which counts it by
//! source); every other envelope passes on. In the crate because every event passes it: the Python stage's call was
//! about 0.6 us an event.
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use pyo3::{intern, PyTraverseError, PyVisit};

#[pyclass(frozen, module = "ragpulse._native")]
pub struct ProbeCore {
    attribute: Py<PyString>,
    dropped: Py<PyAny>, // dropped(envelope): counts a probe event
}

#[pymethods]
impl ProbeCore {
    #[new]
    fn new(attribute: Py<PyString>, dropped: Py<PyAny>) -> Self {
        ProbeCore { attribute, dropped }
    }

    /// The stage: None for a probe event (counted), else the envelope.
    fn process<'py>(&self, envelope: Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = envelope.py();
        let attributes = envelope.getattr(intern!(py, "event"))?.getattr(intern!(py, "attributes"))?;
        // As `bool(attributes) and PROBE_ATTRIBUTE in attributes`: any mapping, a dict read without a call.
        let probe = match attributes.cast::<PyDict>() {
            Ok(dict) => !dict.is_empty() && dict.contains(self.attribute.bind(py))?,
            Err(_) => attributes.is_truthy()? && attributes.contains(self.attribute.bind(py))?,
        };
        if !probe {
            return Ok(Some(envelope));
        }
        self.dropped.call1(py, (envelope,))?;
        Ok(None)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.dropped)
    }
}
