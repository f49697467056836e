//! ragpulse._native: the compiled core behind ragpulse's Python API (README "Packaging").
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyList, PyString, PyTuple};
use pyo3::IntoPyObject;

mod otlp;

/// Requests from this size on are parsed with the GIL released, so the event loop keeps serving meanwhile.
const DETACH_FROM_BYTES: usize = 64 * 1024;

fn value_to_py<'py>(py: Python<'py>, value: &otlp::Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        otlp::Value::Str(text) => PyString::new(py, text).into_any(),
        otlp::Value::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any(),
        otlp::Value::Int(number) => number.into_pyobject(py)?.into_any(),
        otlp::Value::Double(number) => PyFloat::new(py, *number).into_any(),
        otlp::Value::Bytes(bytes) => PyBytes::new(py, bytes).into_any(),
        otlp::Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(value_to_py(py, item)?)?;
            }
            list.into_any()
        }
        otlp::Value::KvList(pairs) => attributes_to_py(py, pairs)?.into_any(),
        otlp::Value::Empty => py.None().into_bound(py),
    })
}

fn attributes_to_py<'py>(py: Python<'py>, pairs: &otlp::Attributes) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (key, value) in pairs {
        dict.set_item(*key, value_to_py(py, value)?)?; // a key given twice: the last wins, as in the Python decoding
    }
    Ok(dict)
}

/// An OTLP ExportTraceServiceRequest (protobuf bytes) as (resources, spans): each resource's attributes as a dict;
/// each span as (trace_id, span_id, parent_span_id, name, kind, start, end, attributes, events, size, resource
/// index, scope name), events as (name, time, attributes). Raises ValueError with the reason on a malformed request.
#[pyfunction]
fn decode_otlp_traces<'py>(py: Python<'py>, body: &Bound<'py, PyBytes>) -> PyResult<Bound<'py, PyTuple>> {
    let bytes = body.as_bytes();
    let parse = move || std::panic::catch_unwind(|| otlp::decode(bytes));
    let parsed = if bytes.len() >= DETACH_FROM_BYTES { py.detach(parse) } else { parse() };
    let request = match parsed {
        Ok(Ok(request)) => request,
        Ok(Err(otlp::DecodeError(reason))) => return Err(PyValueError::new_err(reason)),
        Err(_) => return Err(PyValueError::new_err("the native OTLP decoder failed (a defect: please report it)")),
    };
    let resources = PyList::empty(py);
    for attributes in &request.resources {
        resources.append(attributes_to_py(py, attributes)?)?;
    }
    let spans = PyList::empty(py);
    for span in &request.spans {
        let events = PyList::empty(py);
        for event in &span.events {
            events.append((event.name, event.time_unix_nano, attributes_to_py(py, &event.attributes)?))?;
        }
        let record = (
            PyBytes::new(py, span.trace_id), PyBytes::new(py, span.span_id), PyBytes::new(py, span.parent_span_id),
            span.name, span.kind, span.start_unix_nano, span.end_unix_nano, attributes_to_py(py, &span.attributes)?,
            events, span.size, span.resource, span.scope,
        );
        spans.append(record)?;
    }
    PyTuple::new(py, [resources.into_any(), spans.into_any()])
}

#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(decode_otlp_traces, module)?)?;
    Ok(())
}
