//! ragpulse._native.run_stages: the pipeline's loop over a batch (collector/pipeline.py says what a stage and an
//! exporter are): each envelope through the stages in order until one drops it, then to every exporter, then
//! counted as processed. A component that raises an Exception costs its part of one event, not the stream: the
//! pipeline's Python hears of it (`failed`) and the event goes on as it was; anything else (a cancellation, an exit)
//! is raised on.
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyType};
use pyo3::intern;

use crate::metrics::FastCounter;
use crate::series::Scope;

/// `call(argument)`; an Exception goes to failed(name, envelope, error) and gives None.
fn guarded_call<'py>(name: &Bound<'py, PyAny>, call: &Bound<'py, PyAny>, argument: &Bound<'py, PyAny>,
                     envelope: &Bound<'py, PyAny>, failed: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = call.py();
    match call.call1((argument,)) {
        Ok(result) => Ok(Some(result)),
        Err(error) if error.is_instance_of::<PyException>(py) => {
            failed.call1((name, envelope, error.into_value(py)))?; // its traceback on it, for the log
            Ok(None)
        }
        Err(error) => Err(error),
    }
}

type Pairs<'py> = Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>;

fn pairs<'py>(list: &Bound<'py, PyList>) -> PyResult<Pairs<'py>> {
    list.iter().map(|pair| Ok((pair.get_item(0)?, pair.get_item(1)?))).collect()
}

/// The batch's envelopes through `stages` and `exporters` ((name, callable) pairs), each that passed every stage
/// counted in `traces` or `feedback` by its event's type.
#[pyfunction]
#[pyo3(signature = (batch, stages, exporters, trace_type, traces, feedback, *, failed))]
pub fn run_stages<'py>(batch: &Bound<'py, PyAny>, stages: &Bound<'py, PyList>, exporters: &Bound<'py, PyList>,
                       trace_type: &Bound<'py, PyType>, traces: &Bound<'py, FastCounter>,
                       feedback: &Bound<'py, FastCounter>, failed: &Bound<'py, PyAny>) -> PyResult<()> {
    let py = batch.py();
    let (stages, exporters) = (pairs(stages)?, pairs(exporters)?);
    let labels = Scope::enter(); // each envelope's raw labels read once for every component (series.rs)
    'events: for envelope in batch.try_iter()? {
        let envelope = envelope?;
        labels.next();
        let mut current = envelope.clone();
        for (name, stage) in &stages {
            // On a failure the event goes on without what this stage would have added.
            current = guarded_call(name, stage, &current, &envelope, failed)?.unwrap_or_else(|| envelope.clone());
            if current.is_none() {
                continue 'events;
            }
        }
        for (name, exporter) in &exporters {
            guarded_call(name, exporter, &current, &envelope, failed)?;
        }
        let counted = if envelope.getattr(intern!(py, "event"))?.is_instance(trace_type)? { traces } else { feedback };
        counted.get().add(1.0);
    }
    Ok(())
}

