//! ragpulse._native.CitationCore: the citations stage (scorers/citations.py says what it counts and why): an answer's
//! inline citations counted (bindings.rs's count_inline), its text without them left on the envelope for the lexical
//! scorer, and its label set's counters. What needs the rest of ragpulse goes back to the stage's Python: structured
//! citations (event_citations) and a label set not cached yet (its counters, through the guard).
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple, PyType};
use pyo3::{intern, PyTraverseError, PyVisit};

use super::bindings::count_inline;
use super::may_cite;
use crate::metrics::FastCounter;
use crate::series::RawSeries;

/// The stage's Python: structured(event) -> Citations | None; series(raw label values) -> its _Series.
struct Back {
    structured: Py<PyAny>,
    series: Py<PyAny>,
}

#[pyclass(module = "ragpulse._native")]
pub struct CitationCore {
    trace_type: Py<PyType>,
    series: RawSeries,
    back: Option<Back>, // None once the garbage collector cleared it
}

/// False when the answer has no citation for certain (scorers/citations.py's may_cite): an ASCII answer (most) read in
/// place, any other searched as Python searches it.
fn may_cite_str(answer: &Bound<'_, PyString>) -> PyResult<bool> {
    // SAFETY: a live str, held by its Bound; the macro reads its state flags.
    if unsafe { pyo3::ffi::PyUnicode_IS_ASCII(answer.as_ptr()) } != 0 {
        return Ok(may_cite(answer.to_str()?));
    }
    for needle in ["[", "【", "［", "ource", "来源"] {
        if answer.as_any().contains(needle)? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn add(series: &Bound<'_, PyAny>, name: &Bound<'_, PyString>, amount: &Bound<'_, PyAny>) -> PyResult<()> {
    series.getattr(name)?.cast::<FastCounter>()?.get().add(amount.extract()?);
    Ok(())
}

fn inc(series: &Bound<'_, PyAny>, name: &Bound<'_, PyString>) -> PyResult<()> {
    series.getattr(name)?.cast::<FastCounter>()?.get().add(1.0);
    Ok(())
}

impl CitationCore {
    /// The answer's inline citations, counted: (text, cited, uncited, resolved, dangling, over_cap); the text without
    /// the markers goes on the envelope.
    fn inline<'py>(envelope: &Bound<'py, PyAny>, event: &Bound<'py, PyAny>, answer: &Bound<'py, PyString>)
                   -> PyResult<Option<Bound<'py, PyTuple>>> {
        let py = envelope.py();
        if !may_cite_str(answer)? {
            return Ok(None); // before the chunk ids are gathered: this is every answer's cost
        }
        let mut ids = Vec::new();
        let chunks = event.getattr(intern!(py, "chunks"))?;
        if !chunks.is_none() {
            for chunk in chunks.try_iter()? {
                let id = chunk?.getattr(intern!(py, "id"))?;
                ids.push(if id.is_none() { None } else { Some(id.cast_into::<PyString>()?) });
            }
        }
        let found = count_inline(answer, ids)?;
        if let Some(found) = &found {
            envelope.setattr(intern!(py, "answer_text"), found.get_item(0)?)?;
        }
        Ok(found)
    }
}

#[pymethods]
impl CitationCore {
    #[new]
    #[pyo3(signature = (trace_type, labels, max_cached, *, structured, series))]
    fn new(trace_type: Py<PyType>, labels: Vec<Py<PyString>>, max_cached: usize, structured: Py<PyAny>,
           series: Py<PyAny>, py: Python<'_>) -> Self {
        CitationCore { trace_type, series: RawSeries::new(py, labels, max_cached),
                       back: Some(Back { structured, series }) }
    }

    /// The stage: every answer's citations counted (not a fallback's, whose citations are no answer's).
    fn process<'py>(&self, envelope: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = envelope.py();
        let Some(back) = &self.back else { return Ok(envelope) };
        let event = envelope.getattr(intern!(py, "event"))?;
        if !event.is_instance(self.trace_type.bind(py))? {
            return Ok(envelope);
        }
        let answer = event.getattr(intern!(py, "answer"))?;
        if !answer.is_truthy()? {
            return Ok(envelope);
        }
        let structured = !event.getattr(intern!(py, "citations"))?.is_none();
        let inline = if structured { None } else { Self::inline(&envelope, &event, answer.cast::<PyString>()?)? };
        if !envelope.getattr(intern!(py, "fallback_rule"))?.is_none() {
            return Ok(envelope); // a refusal's citations are no answer's
        }
        let series = self.series.of(&event, |raw| back.series.bind(py).call1((raw,)))?;
        let (resolved, dangling, over_cap) = if structured {
            let citations = back.structured.bind(py).call1((&event,))?;
            if citations.is_none() {
                inc(&series, intern!(py, "not_cited"))?;
                return Ok(envelope);
            }
            (citations.getattr(intern!(py, "resolved"))?, citations.getattr(intern!(py, "dangling"))?,
             citations.getattr(intern!(py, "over_cap"))?)
        } else if let Some(inline) = inline {
            // Coverage is known of inline markers only (structured_citations).
            add(&series, intern!(py, "cited_sentences"), &inline.get_item(1)?)?;
            add(&series, intern!(py, "uncited_sentences"), &inline.get_item(2)?)?;
            (inline.get_item(3)?, inline.get_item(4)?, inline.get_item(5)?)
        } else {
            inc(&series, intern!(py, "not_cited"))?;
            return Ok(envelope);
        };
        inc(&series, intern!(py, "cited"))?;
        if over_cap.is_truthy()? {
            inc(&series, intern!(py, "over_cap"))?;
        }
        if !event.getattr(intern!(py, "chunks"))?.is_none() {
            // Without its retrieval reported, no marker could name a chunk.
            add(&series, intern!(py, "resolved"), &resolved)?;
            add(&series, intern!(py, "dangling"), &dangling)?;
        }
        Ok(envelope)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.series.traverse(&visit)?;
        if let Some(back) = &self.back {
            visit.call(&back.structured)?;
            visit.call(&back.series)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.back = None;
    }
}
