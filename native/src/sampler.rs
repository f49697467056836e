//! ragpulse._native.SamplerCore: the judge sampler's stage (judging/sampler.py says what it samples and why): whether
//! a trace is judgeable, the routine floor's rate (native/src/floor.rs), the routine draw and its stratum's class's
//! draw, their counters (the offered children cached by raw labels), and the turn the join kept. What needs the rest
//! of ragpulse goes back to the sampler's Python: the event when it must be rebuilt (context, chunks without text), a
//! new label set's counter, the judge queue's offer, the join's passed, and feedback that came before its trace. The
//! policy's stratum and base rate (native/src/policy.rs) and the join's keep (the trace table's keep_event) are here.
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyString, PyTuple, PyType};
use pyo3::{intern, PyTraverseError, PyVisit};

use crate::draw::draw;
use crate::fields::Field;
use crate::floor::RoutineFloor;
use crate::metrics::FastCounter;
use crate::policy::PolicyCore;
use crate::series::raw_labels;
use crate::traces::bindings::TraceTable;

/// The sampler's Python: judgeable(event) -> event | None; offered(event, fallback, stratum) -> FastCounter;
/// offer(event, fallback, priority, sample, stratum, reasons, size) -> bool; pack(event) -> (kept, bytes) (the join's, for
/// the event it keeps); passed(trace_id); negative(priority, turn).
struct Back {
    judgeable: Py<PyAny>,
    offered: Py<PyAny>,
    offer: Py<PyAny>,
    pack: Py<PyAny>,
    passed: Py<PyAny>,
    negative: Py<PyAny>,
}

/// The fields the stage reads of every envelope, its trace and the trace's chunks, at their slots
/// (native/src/fields.rs).
struct Fields {
    event: Field,
    fallback_rule: Field,
    size: Field,
    trace_id: Field,
    answer: Field,
    app: Field,
    chunks: Field,
    context: Field,
    text: Field, // a chunk's
}

impl Fields {
    fn of(trace_type: &Bound<'_, PyType>, chunk_type: &Bound<'_, PyType>, envelope_type: &Bound<'_, PyType>)
          -> PyResult<Fields> {
        Ok(Fields {
            event: Field::of(envelope_type, "event")?, fallback_rule: Field::of(envelope_type, "fallback_rule")?,
            size: Field::of(envelope_type, "size")?, trace_id: Field::of(trace_type, "trace_id")?,
            answer: Field::of(trace_type, "answer")?, app: Field::of(trace_type, "app")?,
            chunks: Field::of(trace_type, "chunks")?, context: Field::of(trace_type, "context")?,
            text: Field::of(chunk_type, "text")?,
        })
    }

    fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        let Fields { event, fallback_rule, size, trace_id, answer, app, chunks, context, text } = self;
        for field in [event, fallback_rule, size, trace_id, answer, app, chunks, context, text] {
            field.traverse(visit)?;
        }
        Ok(())
    }
}

#[pyclass(module = "ragpulse._native")]
pub struct SamplerCore {
    trace_type: Py<PyType>,
    fields: Fields,
    floor: Py<RoutineFloor>,
    policy: Py<PolicyCore>,
    traces: Py<TraceTable>, // the join's: the judgeable trace's event is kept there for late signals
    class_rates: [Option<f64>; 3], // always, scorer_flag, over_refusal
    labels: Vec<Py<PyString>>, // the label names, as the guard reads an event's raw values
    routine: Py<FastCounter>,  // candidates of base_rate
    classes: [Py<FastCounter>; 3], // candidates of always, scorer_flag, over_refusal
    raised: Py<PyAny>, // a prometheus_client Counter: rare
    offered: Py<PyDict>, // (*raw labels, fallback, stratum) -> FastCounter
    max_offered: usize,
    back: Option<Back>,
}

impl SamplerCore {
    /// The counter of judgeable traces offered by raw labels, fallback and stratum (children cached, bounded).
    fn count_offered(&self, event: &Bound<'_, PyAny>, fallback: bool, stratum: usize, back: &Back) -> PyResult<()> {
        let py = event.py();
        let mut key = Vec::with_capacity(self.labels.len() + 2);
        key.extend(raw_labels(event, &self.labels)?.iter());
        key.push(PyBool::new(py, fallback).to_owned().into_any());
        key.push(names(py, stratum).0.clone().into_any());
        let key = PyTuple::new(py, key)?;
        let cache = self.offered.bind(py);
        let child = match cache.get_item(&key)? {
            Some(child) => child,
            None => {
                if cache.len() >= self.max_offered {
                    cache.clear();
                }
                let child = back.offered.bind(py).call1((event, fallback, names(py, stratum).0))?;
                cache.set_item(&key, &child)?;
                child
            }
        };
        child.cast::<FastCounter>()?.get().add(1.0);
        Ok(())
    }

    fn back(&self, py: Python<'_>) -> Option<Back> {
        self.back.as_ref().map(|back| Back {
            judgeable: back.judgeable.clone_ref(py), offered: back.offered.clone_ref(py),
            offer: back.offer.clone_ref(py), pack: back.pack.clone_ref(py), passed: back.passed.clone_ref(py),
            negative: back.negative.clone_ref(py),
        })
    }
}

/// A stratum's name and its class's, interned once.
fn names(py: Python<'_>, stratum: usize) -> (&Bound<'_, PyString>, Option<&Bound<'_, PyString>>) {
    match stratum {
        0 => (intern!(py, "always"), Some(intern!(py, "always"))),
        1 => (intern!(py, "flagged"), Some(intern!(py, "scorer_flag"))),
        2 => (intern!(py, "over_refusal"), Some(intern!(py, "over_refusal"))),
        _ => (intern!(py, "none"), None),
    }
}

/// Whether the trace has something to judge it against as it is: no context besides its chunks, and text in each.
fn as_sent(text: &Field, context: &Bound<'_, PyAny>, chunks: &Bound<'_, PyAny>) -> PyResult<bool> {
    if context.is_truthy()? {
        return Ok(false);
    }
    if chunks.is_none() {
        return Ok(true);
    }
    for chunk in chunks.try_iter()? {
        if text.get(&chunk?)?.is_none() {
            return Ok(false);
        }
    }
    Ok(true)
}

#[pymethods]
impl SamplerCore {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (trace_type, chunk_type, envelope_type, floor, policy, traces, class_rates, labels, routine,
                        classes, raised, max_offered, *, judgeable, offered, offer, pack, passed, negative))]
    fn new(trace_type: Bound<'_, PyType>, chunk_type: Bound<'_, PyType>, envelope_type: Bound<'_, PyType>,
           floor: Py<RoutineFloor>, policy: Py<PolicyCore>, traces: Py<TraceTable>,
           class_rates: [Option<f64>; 3], labels: Vec<Py<PyString>>, routine: Py<FastCounter>,
           classes: [Py<FastCounter>; 3], raised: Py<PyAny>, max_offered: usize, judgeable: Py<PyAny>,
           offered: Py<PyAny>, offer: Py<PyAny>, pack: Py<PyAny>, passed: Py<PyAny>, negative: Py<PyAny>,
           py: Python<'_>) -> PyResult<Self> {
        let fields = Fields::of(&trace_type, &chunk_type, &envelope_type)?;
        Ok(SamplerCore { trace_type: trace_type.unbind(), fields, floor, policy, traces, class_rates, labels, routine,
                         classes, raised, offered: PyDict::new(py).unbind(), max_offered,
                         back: Some(Back { judgeable, offered, offer, pack, passed, negative }) })
    }

    /// The stage: every envelope passes on; a judgeable trace is counted, drawn, offered to the judge queue and kept.
    fn sample<'py>(&self, envelope: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = envelope.py();
        let fields = &self.fields;
        let event = fields.event.get(&envelope)?;
        if !event.is_instance(self.trace_type.bind(py))? {
            return Ok(envelope); // feedback meets its trace in the join, which tells negative() of it
        }
        let Some(back) = self.back(py) else { return Ok(envelope) };
        let fallback = !fields.fallback_rule.get(&envelope)?.is_none();
        let trace_id = fields.trace_id.get(&event)?;
        let chunks = fields.chunks.get(&event)?;
        let context = fields.context.get(&event)?;
        if fields.answer.get(&event)?.is_none()
            || (!fallback && !chunks.is_truthy()? && !context.is_truthy()?) {
            back.passed.call1(py, (trace_id,))?; // a failed run, or an answer with nothing to judge it against
            return Ok(envelope);
        }
        let arrived = event.clone(); // its stratum is the trace's as it came, before any rebuild
        let event = if as_sent(&fields.text, &context, &chunks)? {
            event
        } else {
            let rebuilt = back.judgeable.bind(py).call1((event,))?;
            if rebuilt.is_none() {
                back.passed.call1(py, (trace_id,))?;
                return Ok(envelope);
            }
            rebuilt
        };
        let policy = self.policy.get();
        let stratum = policy.stratum_of(&envelope, &arrived, fallback)?;
        self.count_offered(&event, fallback, stratum, &back)?;
        let (stratum_name, class) = names(py, stratum);
        let base_rate_class = intern!(py, "base_rate");
        let reasons = match class {
            None => PyTuple::new(py, [base_rate_class])?,
            Some(class) => PyTuple::new(py, [class, base_rate_class])?,
        };
        // The routine draw first, by the trace id alone: flags and feedback cannot move a trace in or out.
        self.routine.get().add(1.0);
        let base_rate = policy.rate_of(&event)?;
        let app = fields.app.get(&event)?;
        let app = if app.is_none() { None } else { Some(app.cast::<PyString>()?.to_str()?) };
        let routine_rate = self.floor.bind(py).borrow_mut().rate_of(py, app, base_rate)?;
        let id = trace_id.cast::<PyString>()?.to_str()?;
        let number = draw(id, "routine");
        let size = fields.size.get(&envelope)?;
        let mut sampled_by = PyTuple::empty(py);
        if number < routine_rate {
            if routine_rate > base_rate && number >= base_rate {
                self.raised.call_method0(py, intern!(py, "inc"))?; // in the routine sample because of the floor alone
            }
            let args = (&event, fallback, base_rate_class, intern!(py, "routine"), stratum_name, &reasons, &size);
            if back.offer.bind(py).call1(args)?.is_truthy()? {
                sampled_by = PyTuple::new(py, [base_rate_class])?;
            }
        } else if let Some(class) = class {
            self.classes[stratum].get().add(1.0);
            let rate = self.class_rates[stratum]
                .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(class.clone().unbind()))?;
            // Its own stream: the class's rate does not nest inside the routine sample's.
            if draw(id, class.to_str()?) < rate {
                let args = (&event, fallback, class, intern!(py, "targeted"), stratum_name, &reasons, &size);
                if back.offer.bind(py).call1(args)?.is_truthy()? {
                    sampled_by = PyTuple::new(py, [class])?;
                }
            }
        }
        let (traces, sampled_by) = (self.traces.bind(py), sampled_by.into_any().unbind());
        if let Some(turn) = TraceTable::keep_event(traces, &event, sampled_by, back.pack.bind(py))? {
            let turn = turn.bind(py);
            let raised = turn.borrow().raised.clone_ref(py);
            for priority in raised.bind(py).try_iter()? {
                back.negative.call1(py, (priority?, turn))?; // feedback that came before its trace
            }
            turn.borrow_mut().raised = PyTuple::empty(py).into_any().unbind();
        }
        Ok(envelope)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Some(back) = &self.back {
            for callback in [&back.judgeable, &back.offered, &back.offer, &back.pack, &back.passed, &back.negative] {
                visit.call(callback)?;
            }
        }
        self.fields.traverse(&visit)?;
        visit.call(&self.floor)?;
        visit.call(&self.policy)?;
        visit.call(&self.traces)?;
        visit.call(&self.raised)?;
        visit.call(&self.offered)
    }

    fn __clear__(&mut self) {
        self.back = None;
    }
}

/// ragpulse._native.draw: a uniform number in [0, 1) from the trace id, one independent stream per `name`.
#[pyfunction]
#[pyo3(name = "draw")]
pub fn draw_of(trace_id: &str, name: &str) -> f64 {
    draw(trace_id, name)
}
