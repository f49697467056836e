//! ragpulse._native.fallback_fields: the fallback stage's batch preparation by the event's fields (scorers/fallback.py
//! `prepare` and `_by_fields` say what decides and why), one pass over the batch in the crate: the Python loop was
//! 1.3 us an event of the fast path. What the fields leave undecided (an answer for the phrase rules) comes back with
//! the answers joined for the rules' one search.
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyType};
use pyo3::intern;

/// The undecided envelopes (with `join`, their rule set to None until the rules say otherwise), their answers joined by "\n" (None unless `join`) and where each answer starts there.
type Pending<'py> = (Bound<'py, PyList>, Option<Bound<'py, PyBytes>>, Vec<usize>);

/// A trace's rule by its fields (`_by_fields`): Some(name or None) when they decide it, None when the phrase rules must.
fn by_fields<'py>(event: &Bound<'py, PyAny>, explicit: &Bound<'py, PyString>, empty: &Bound<'py, PyString>,
                  empty_retrieval: bool, rules: bool) -> PyResult<Option<Bound<'py, PyAny>>> {
    let py = event.py();
    let none = py.None().into_bound(py);
    if event.getattr(intern!(py, "answer"))?.is_none() {
        return Ok(Some(none)); // a failed run gave no answer, so no fallback either
    }
    let flag = event.getattr(intern!(py, "fallback"))?;
    if !flag.is_none() {
        return Ok(Some(if flag.is_truthy()? { explicit.clone().into_any() } else { none }));
    }
    if empty_retrieval {
        let chunks = event.getattr(intern!(py, "chunks"))?;
        if !chunks.is_none() && !chunks.is_truthy()? {
            return Ok(Some(empty.clone().into_any()));
        }
    }
    Ok((!rules).then_some(none))
}

/// Each trace's rule by its fields set on its envelope (`explicit` or `empty` the rule's name, or None), as `_by_fields`
/// decides it: no answer, none; the `fallback` flag, explicit or none; `chunks: []` (when `empty_retrieval`), empty;
/// else, without phrase `rules`, none, and with them undecided: returned.
#[pyfunction]
#[pyo3(signature = (batch, trace_type, explicit, empty, *, empty_retrieval, rules, join))]
pub fn fallback_fields<'py>(batch: &Bound<'py, PyAny>, trace_type: &Bound<'py, PyType>, explicit: &Bound<'py, PyString>,
                            empty: &Bound<'py, PyString>, empty_retrieval: bool, rules: bool, join: bool)
                            -> PyResult<Pending<'py>> {
    let py = batch.py();
    let pending = PyList::empty(py);
    let rule = intern!(py, "fallback_rule");
    for envelope in batch.try_iter()? {
        let envelope = envelope?;
        let event = envelope.getattr(intern!(py, "event"))?;
        if !event.is_instance(trace_type)? {
            continue;
        }
        match by_fields(&event, explicit, empty, empty_retrieval, rules)? {
            Some(decided) => envelope.setattr(rule, decided)?,
            None => pending.append(&envelope)?,
        }
    }
    if !join || pending.is_empty() {
        return Ok((pending, None, Vec::new()));
    }
    let (mut joined, mut starts) = (Vec::new(), Vec::with_capacity(pending.len()));
    for envelope in pending.iter() {
        let answer = envelope.getattr(intern!(py, "event"))?.getattr(intern!(py, "answer"))?;
        if !starts.is_empty() {
            joined.push(b'\n');
        }
        starts.push(joined.len());
        envelope.setattr(rule, py.None())?; // none unless the search and the rules find otherwise
        joined.extend_from_slice(answer.cast::<PyString>()?.to_str()?.as_bytes()); // str.encode(): UTF-8, strict
    }
    Ok((pending, Some(PyBytes::new(py, &joined)), starts))
}
