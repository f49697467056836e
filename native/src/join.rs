//! ragpulse._native.JoinCore: the feedback join's stage (feedback/join.py says what the join holds and why): the clock
//! and the expiry step, and a trace's way in: its raw labels, its answer in the trace table, its turn to the reorder
//! hold or its session, all in the crate. What needs the rest of ragpulse goes back to the join's Python: the expiry,
//! feedback, a label set never answered before, and feedback that waited for this trace.
use pyo3::prelude::*;
use pyo3::types::{PyDict, PySet, PyString, PyTuple, PyType};
use pyo3::{intern, PyTraverseError, PyVisit};
use std::sync::atomic::{AtomicU64, Ordering};

use rustc_hash::FxHashSet;

use crate::reorder::bindings::ReorderHold;
use crate::series::raw_labels;
use crate::sessions::SessionTable;
use crate::traces::bindings::TraceTable;

/// The join's Python: clock() -> float; expire(now); feedback(event, now, partition); answered(labels) (a raw label
/// set not in `answered`); met(trace_id, entry, turn, partition) (the trace's entry of waiting feedback).
struct Back {
    clock: Py<PyAny>,
    expire: Py<PyAny>,
    feedback: Py<PyAny>,
    answered: Py<PyAny>,
    met: Py<PyAny>,
}

#[pyclass(module = "ragpulse._native")]
pub struct JoinCore {
    trace_type: Py<PyType>,
    traces: Py<TraceTable>,
    sessions: Py<SessionTable>,
    reorder: Option<Py<ReorderHold>>,
    labels: Vec<Py<PyString>>,
    escalation_routes: FxHashSet<String>,
    answered_labels: Py<PySet>, // the raw label sets admitted already (the signal counter's)
    pending: Py<PyDict>,        // trace id -> (arrival of the first, waiting feedback): the join's
    // The clock's reading at or after which the next event ends what is over first (windows end to within a step): the
    // bits of an f64, set by the join's expire() while the stage holds the core (a callback; no exclusive borrow).
    next_expiry: AtomicU64,
    back: Option<Back>, // None once the garbage collector cleared it
}

impl JoinCore {
    fn back(&self, py: Python<'_>) -> Option<Back> {
        self.back.as_ref().map(|back| Back {
            clock: back.clock.clone_ref(py), expire: back.expire.clone_ref(py), feedback: back.feedback.clone_ref(py),
            answered: back.answered.clone_ref(py), met: back.met.clone_ref(py),
        })
    }

    /// A trace's answer and its session's turn; feedback that waited for it meets it.
    fn answer(&self, event: &Bound<'_, PyAny>, fallback: bool, now: f64, partition: i64, back: &Back) -> PyResult<()> {
        let py = event.py();
        let trace_id = event.getattr(intern!(py, "trace_id"))?.cast_into::<PyString>()?;
        let labels = raw_labels(event, &self.labels)?;
        if !self.answered_labels.bind(py).contains(&labels)? {
            back.answered.call1(py, (&labels,))?;
        }
        // The same trace again (re-sent, or its late spans): the newer wins.
        let turn = self.traces.bind(py).borrow_mut().add(py, trace_id.clone(), now, labels.into_any().unbind(), fallback,
                                                         partition)?;
        let turn = turn.into_bound(py);
        let session_id = event.getattr(intern!(py, "session_id"))?;
        if session_id.is_truthy()? {
            let session_id = session_id.cast::<PyString>()?;
            let key = session_id.to_str()?;
            let route = event.getattr(intern!(py, "route"))?;
            let route_name = if route.is_none() { None } else { Some(route.cast::<PyString>()?.to_str()?) };
            let query = event.getattr(intern!(py, "query"))?.cast_into::<PyString>()?;
            let timestamp = event.getattr(intern!(py, "timestamp"))?;
            let reorder = self.reorder.as_ref().map(|hold| hold.bind(py))
                .filter(|hold| !timestamp.is_none() || hold.borrow().holds(key));
            if let Some(hold) = reorder {
                // Its signals wait for it to settle, as a turn's; ordered by its timestamp (epoch seconds, once
                // decoded), classified when it comes back, as at the time it came.
                turn.borrow_mut().open = !route_name.is_some_and(|route| self.escalation_routes.contains(route));
                let at: Option<f64> = timestamp.extract()?;
                if let Some(at) = at {
                    if self.sessions.borrow(py).released(key).is_some_and(|released| at < released) {
                        hold.borrow().late();
                    }
                }
                let args = PyTuple::new(py, [session_id.as_any(), &route, query.as_any(), turn.as_any(),
                                             &now.into_pyobject(py)?.into_any(), &timestamp])?;
                ReorderHold::turn(hold, key, at, partition, query.len()? as i64, now, args.unbind())?;
            } else {
                SessionTable::turn(self.sessions.bind(py), session_id, route_name, &query, &turn, now, None)?;
            }
        }
        let pending = self.pending.bind(py);
        if !pending.is_empty() {
            if let Some(entry) = pending.get_item(&trace_id)? {
                back.met.call1(py, (trace_id, entry, turn, partition))?;
            }
        }
        Ok(())
    }
}

#[pymethods]
impl JoinCore {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (trace_type, traces, sessions, reorder, labels, escalation_routes, answered_labels, pending, *,
                        clock, expire, feedback, answered, met))]
    fn new(trace_type: Py<PyType>, traces: Py<TraceTable>, sessions: Py<SessionTable>, reorder: Option<Py<ReorderHold>>,
           labels: Vec<Py<PyString>>, escalation_routes: FxHashSet<String>, answered_labels: Py<PySet>,
           pending: Py<PyDict>, clock: Py<PyAny>, expire: Py<PyAny>, feedback: Py<PyAny>, answered: Py<PyAny>,
           met: Py<PyAny>) -> Self {
        JoinCore { trace_type, traces, sessions, reorder, labels, escalation_routes, answered_labels, pending,
                   next_expiry: AtomicU64::new(0.0_f64.to_bits()),
                   back: Some(Back { clock, expire, feedback, answered, met }) }
    }

    /// The stage: ends what is over once a step, then a trace's answer and turn, or feedback; the envelope passes on.
    fn process<'py>(&self, envelope: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = envelope.py();
        let Some(back) = self.back(py) else { return Ok(envelope) };
        let now: f64 = back.clock.call0(py)?.extract(py)?;
        if now >= f64::from_bits(self.next_expiry.load(Ordering::Relaxed)) {
            back.expire.call1(py, (now,))?;
        }
        let event = envelope.getattr(intern!(py, "event"))?;
        let partition = envelope.getattr(intern!(py, "partition"))?;
        let partition: i64 = if partition.is_none() { -1 } else { partition.extract()? };
        if event.is_instance(self.trace_type.bind(py))? {
            let fallback = !envelope.getattr(intern!(py, "fallback_rule"))?.is_none();
            self.answer(&event, fallback, now, partition, &back)?;
        } else {
            back.feedback.call1(py, (event, now, partition))?;
        }
        Ok(envelope)
    }

    /// A trace read back (the join's replay), with whether it is a fallback.
    fn trace(&self, event: Bound<'_, PyAny>, fallback: bool, now: f64, partition: i64) -> PyResult<()> {
        let Some(back) = self.back(event.py()) else { return Ok(()) };
        self.answer(&event, fallback, now, partition, &back)
    }

    /// The clock's reading at or after which the next event ends what is over first (windows end to within a step).
    #[getter]
    fn next_expiry(&self) -> f64 {
        f64::from_bits(self.next_expiry.load(Ordering::Relaxed))
    }

    #[setter]
    fn set_next_expiry(&self, at: f64) {
        self.next_expiry.store(at.to_bits(), Ordering::Relaxed);
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Some(back) = &self.back {
            for callback in [&back.clock, &back.expire, &back.feedback, &back.answered, &back.met] {
                visit.call(callback)?;
            }
        }
        if let Some(reorder) = &self.reorder {
            visit.call(reorder)?;
        }
        visit.call(&self.traces)?;
        visit.call(&self.sessions)?;
        visit.call(&self.pending)?;
        visit.call(&self.answered_labels)
    }

    fn __clear__(&mut self) {
        self.back = None;
    }
}
