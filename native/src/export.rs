//! ragpulse._native.ExporterCore: the fast-path exporter's trace samples (exporters/prometheus.py says what each
//! family counts): a trace's label set's children, cached by raw label values (bounded), and what the trace adds
//! to them, in the order the Python did it. What needs the rest of ragpulse goes back to the exporter's Python: a
//! label set not cached yet (its series, through the guard), a fallback rule's counter, the guard's overflow count,
//! feedback.
use pyo3::prelude::*;
use pyo3::types::{PyString, PyType};
use pyo3::{intern, PyTraverseError, PyVisit};

use crate::metrics::{FastCounter, FastHistogram};
use crate::series::RawSeries;

/// Per trace, the searches observed at most: a count from outside must not make the loop long.
const MAX_SEARCHES: usize = 64;

/// One label set's children, read once from its Python series (exporters/prometheus.py's _Series).
#[pyclass(frozen, module = "ragpulse._native")]
pub struct ExportSeries {
    series: Py<PyAny>,
    overflowed: Option<Py<PyAny>>, // the labels that overflowed the guard, when any did
    traces: Py<FastCounter>,
    failed: Py<FastCounter>,
    retrieval_empty: Py<FastCounter>,
    chunks: Py<FastHistogram>,
    top_score: Py<FastHistogram>,
    mean_score: Py<FastHistogram>,
    chunk_age: Py<FastHistogram>,
    latency: Py<FastHistogram>,
    prompt_tokens: Py<FastCounter>,
    completion_tokens: Py<FastCounter>,
    usage_partial: Py<FastCounter>,
    retrievals: Py<FastHistogram>,
    searches: Py<FastHistogram>,
}

impl ExportSeries {
    fn of(series: Bound<'_, PyAny>) -> PyResult<Self> {
        let py = series.py();
        let counter = |name: &Bound<'_, PyString>| -> PyResult<Py<FastCounter>> {
            Ok(series.getattr(name)?.cast_into::<FastCounter>()?.unbind())
        };
        let histogram = |name: &Bound<'_, PyString>| -> PyResult<Py<FastHistogram>> {
            Ok(series.getattr(name)?.cast_into::<FastHistogram>()?.unbind())
        };
        let overflowed = series.getattr(intern!(py, "overflowed"))?;
        Ok(ExportSeries {
            overflowed: if overflowed.is_truthy()? { Some(overflowed.unbind()) } else { None },
            traces: counter(intern!(py, "traces"))?, failed: counter(intern!(py, "failed"))?,
            retrieval_empty: counter(intern!(py, "retrieval_empty"))?, chunks: histogram(intern!(py, "chunks"))?,
            top_score: histogram(intern!(py, "top_score"))?, mean_score: histogram(intern!(py, "mean_score"))?,
            chunk_age: histogram(intern!(py, "chunk_age"))?, latency: histogram(intern!(py, "latency"))?,
            prompt_tokens: counter(intern!(py, "prompt_tokens"))?,
            completion_tokens: counter(intern!(py, "completion_tokens"))?,
            usage_partial: counter(intern!(py, "usage_partial"))?, retrievals: histogram(intern!(py, "retrievals"))?,
            searches: histogram(intern!(py, "searches"))?, series: series.unbind(),
        })
    }
}

/// The exporter's Python: series(raw label values) -> its _Series; count_overflow(labels); feedback(event).
struct Back {
    series: Py<PyAny>,
    count_overflow: Py<PyAny>,
    feedback: Py<PyAny>,
}

#[pyclass(module = "ragpulse._native")]
pub struct ExporterCore {
    trace_type: Py<PyType>,
    series: RawSeries, // -> ExportSeries
    back: Option<Back>, // None once the garbage collector cleared it
}

impl ExporterCore {
    fn series_of<'py>(&self, event: &Bound<'py, PyAny>, back: &Back) -> PyResult<Bound<'py, ExportSeries>> {
        let py = event.py();
        let made = self.series.of(event, |raw| {
            Ok(Bound::new(py, ExportSeries::of(back.series.bind(py).call1((raw,))?)?)?.into_any())
        })?;
        Ok(made.cast_into::<ExportSeries>()?)
    }

    /// What a trace's chunks add: their count, the searches' new chunks, none, or their scores and newest age.
    fn chunks(event: &Bound<'_, PyAny>, chunks: &Bound<'_, PyAny>, series: &ExportSeries) -> PyResult<()> {
        let py = event.py();
        let chunks = chunks.try_iter()?.collect::<PyResult<Vec<_>>>()?;
        series.chunks.get().observe(chunks.len() as f64);
        let retrievals = event.getattr(intern!(py, "retrievals"))?;
        if !retrievals.is_none() {
            let retrievals: u64 = retrievals.extract()?;
            series.retrievals.get().observe(retrievals as f64);
            if retrievals > 1 {
                // Each search's new chunks: those tagged with its index (a chunk is tagged by the first that found it).
                let mut found = vec![0u64; (retrievals as usize).min(MAX_SEARCHES)];
                for chunk in chunks.iter() {
                    let retrieval = chunk.getattr(intern!(py, "retrieval"))?;
                    if !retrieval.is_none() {
                        let retrieval: u64 = retrieval.extract()?;
                        if let Some(count) = found.get_mut(retrieval as usize) {
                            *count += 1;
                        }
                    }
                }
                for count in found {
                    series.searches.get().observe(count as f64);
                }
            }
        }
        if chunks.is_empty() {
            series.retrieval_empty.get().add(1.0);
            return Ok(());
        }
        // max() as Python's builtin: the first value, replaced by any greater (a NaN never is, nor replaces).
        let (mut top, mut sum, mut scored) = (None::<f64>, 0.0, 0usize);
        let mut newest = None::<f64>;
        for chunk in chunks.iter() {
            let score = chunk.getattr(intern!(py, "score"))?;
            if !score.is_none() {
                let score: f64 = score.extract()?;
                top = Some(top.map_or(score, |top| if score > top { score } else { top }));
                sum += score;
                scored += 1;
            }
        }
        if let Some(top) = top {
            series.top_score.get().observe(top);
            series.mean_score.get().observe(sum / scored as f64);
        }
        for chunk in chunks.iter() {
            let updated = chunk.getattr(intern!(py, "updated_at"))?;
            if !updated.is_none() {
                let updated: f64 = updated.extract()?;
                newest = Some(newest.map_or(updated, |newest| if updated > newest { updated } else { newest }));
            }
        }
        if let Some(newest) = newest {
            // Age at answer time, so replayed or late events measure what the user saw.
            let age = event.getattr(intern!(py, "timestamp"))?.extract::<f64>()? - newest;
            series.chunk_age.get().observe(if age > 0.0 { age } else { 0.0 });
        }
        Ok(())
    }
}

#[pymethods]
impl ExporterCore {
    #[new]
    #[pyo3(signature = (trace_type, labels, max_cached, *, series, count_overflow, feedback))]
    fn new(trace_type: Py<PyType>, labels: Vec<Py<PyString>>, max_cached: usize, series: Py<PyAny>,
           count_overflow: Py<PyAny>, feedback: Py<PyAny>, py: Python<'_>) -> Self {
        ExporterCore { trace_type, series: RawSeries::new(py, labels, max_cached),
                       back: Some(Back { series, count_overflow, feedback }) }
    }

    /// The exporter: a trace's samples, in the order exporters/prometheus.py made them; feedback goes to its Python.
    fn export(&self, envelope: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = envelope.py();
        let Some(back) = &self.back else { return Ok(()) };
        let event = envelope.getattr(intern!(py, "event"))?;
        if !event.is_instance(self.trace_type.bind(py))? {
            back.feedback.call1(py, (event,))?;
            return Ok(());
        }
        let series = self.series_of(&event, back)?;
        let series = series.get();
        series.traces.get().add(1.0);
        if !event.getattr(intern!(py, "error"))?.is_none() {
            series.failed.get().add(1.0);
        }
        if let Some(overflowed) = &series.overflowed {
            back.count_overflow.call1(py, (overflowed,))?;
        }
        let rule = envelope.getattr(intern!(py, "fallback_rule"))?;
        if !rule.is_none() {
            let child = series.series.bind(py).call_method1(intern!(py, "fallback"), (rule,))?;
            child.cast::<FastCounter>()?.get().add(1.0);
        }
        let chunks = event.getattr(intern!(py, "chunks"))?;
        if !chunks.is_none() {
            Self::chunks(&event, &chunks, series)?;
        }
        let latency = event.getattr(intern!(py, "latency_ms"))?;
        if !latency.is_none() {
            series.latency.get().observe(latency.extract::<f64>()? / 1000.0);
        }
        let usage = event.getattr(intern!(py, "usage"))?;
        if !usage.is_none() {
            series.prompt_tokens.get().add(usage.getattr(intern!(py, "prompt_tokens"))?.extract()?);
            series.completion_tokens.get().add(usage.getattr(intern!(py, "completion_tokens"))?.extract()?);
            if usage.getattr(intern!(py, "unreported_calls"))?.is_truthy()? {
                series.usage_partial.get().add(1.0);
            }
        }
        Ok(())
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.series.traverse(&visit)?;
        if let Some(back) = &self.back {
            for callback in [&back.series, &back.count_overflow, &back.feedback] {
                visit.call(callback)?;
            }
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.back = None;
    }
}
