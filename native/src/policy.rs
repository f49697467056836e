//! ragpulse._native.PolicyCore: the judge sampler's policy as it applies to one trace (judging/sampler.py's
//! SamplingPolicy says what the rates and strata are): the base rate with its app and route overrides, and the stratum
//! at arrival. The sampler's stage (native/src/sampler.rs) asks it without a call into Python; only the always-judge
//! filters (RE2 and labels, configured) are called back, when there are any.
use pyo3::prelude::*;
use pyo3::types::PyString;
use pyo3::{intern, PyTraverseError, PyVisit};
use rustc_hash::FxHashMap;

/// The strata, in order: the first that applies is the trace's.
pub const STRATA: [&str; 4] = ["always", "flagged", "over_refusal", "none"];

type RouteKey = (Option<String>, Option<String>); // (app, route), either None: any

#[pyclass(module = "ragpulse._native", frozen)]
pub struct PolicyCore {
    base_rate: f64,
    overrides: FxHashMap<RouteKey, f64>,
    always: Vec<Py<PyAny>>, // event -> bool
    flag_support_below: f64,
    over_refusal_context_at_least: f64,
}

fn text_of(value: Bound<'_, PyAny>) -> PyResult<Option<String>> {
    if value.is_none() { Ok(None) } else { Ok(Some(value.cast::<PyString>()?.to_str()?.to_owned())) }
}

impl PolicyCore {
    /// The trace's base rate: its (app, route) override, else (any app, route), else (app, any route), else the rate.
    pub fn rate_of(&self, event: &Bound<'_, PyAny>) -> PyResult<f64> {
        if self.overrides.is_empty() {
            return Ok(self.base_rate);
        }
        let py = event.py();
        let app = text_of(event.getattr(intern!(py, "app"))?)?;
        let route = text_of(event.getattr(intern!(py, "route"))?)?;
        for key in [(app.clone(), route.clone()), (None, route), (app, None)] {
            if let Some(rate) = self.overrides.get(&key) {
                return Ok(*rate);
            }
        }
        Ok(self.base_rate)
    }

    /// The index in STRATA of the trace's stratum (`event`: the envelope's): always-judge filters first, then the
    /// local scores (a fallback's only stratum beyond none is over_refusal, an answer's only one flagged).
    pub fn stratum_of(&self, envelope: &Bound<'_, PyAny>, event: &Bound<'_, PyAny>, fallback: bool) -> PyResult<usize> {
        let py = envelope.py();
        for matches in &self.always {
            if matches.bind(py).call1((event,))?.is_truthy()? {
                return Ok(0);
            }
        }
        let scores = envelope.getattr(intern!(py, "local_scores"))?;
        if scores.is_none() {
            return Ok(3);
        }
        let below = |name: &Bound<'_, PyString>, bound: f64, under: bool| -> PyResult<bool> {
            let value = scores.getattr(name)?;
            if value.is_none() {
                return Ok(false);
            }
            let value: f64 = value.extract()?;
            Ok(if under { value < bound } else { value >= bound })
        };
        if !fallback && (scores.getattr(intern!(py, "number_mismatch"))?.is_truthy()?
                         || below(intern!(py, "groundedness"), self.flag_support_below, true)?) {
            return Ok(1);
        }
        if fallback && below(intern!(py, "context_relevance"), self.over_refusal_context_at_least, false)? {
            return Ok(2);
        }
        Ok(3)
    }
}

#[pymethods]
impl PolicyCore {
    #[new]
    #[pyo3(signature = (base_rate, overrides, always, flag_support_below, over_refusal_context_at_least))]
    fn new(base_rate: f64, overrides: FxHashMap<RouteKey, f64>, always: Vec<Py<PyAny>>, flag_support_below: f64,
           over_refusal_context_at_least: f64) -> Self {
        PolicyCore { base_rate, overrides, always, flag_support_below, over_refusal_context_at_least }
    }

    fn base_rate_of(&self, event: &Bound<'_, PyAny>) -> PyResult<f64> {
        self.rate_of(event)
    }

    fn stratum(&self, envelope: &Bound<'_, PyAny>) -> PyResult<&'static str> {
        let py = envelope.py();
        let event = envelope.getattr(intern!(py, "event"))?;
        let fallback = !envelope.getattr(intern!(py, "fallback_rule"))?.is_none();
        Ok(STRATA[self.stratum_of(envelope, &event, fallback)?])
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        for matches in &self.always {
            visit.call(matches)?;
        }
        Ok(())
    }
}
