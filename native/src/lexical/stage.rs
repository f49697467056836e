//! ragpulse._native.LexicalCore: the lexical scorer's stage (scorers/lexical.py says what it scores and why): a trace's
//! texts cut to their first characters, their units from the scorer's two caches (chunks, questions), the scores, and
//! the histograms of the trace's label set. The caches are the scorer's TextTables (native/src/made.rs): a text met
//! before is found without Python; a new one is analysed by the scorer's Python (counted, within the caches' caps).
//! A label set's children not cached yet come from the scorer's Python.
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple, PyType};
use pyo3::{intern, PyTraverseError, PyVisit};

use super::bindings::{LexicalAnalyser, LexicalUnits};
use crate::lexical::Units;
use crate::made::TextTable;
use crate::metrics::{FastCounter, FastHistogram};
use crate::series::RawSeries;

#[pyclass(module = "ragpulse._native")]
pub struct LexicalCore {
    analyser: Py<LexicalAnalyser>,
    trace_type: Py<PyType>,
    scores_type: Py<PyType>, // LexicalScores(groundedness, answer_relevancy, context_relevance, number_mismatch)
    max_chars: usize,
    chunks: Py<TextTable>,
    questions: Py<TextTable>,
    children: RawSeries, // -> (groundedness, relevancy, context, mismatch) children
    make_children: Option<Py<PyAny>>, // raw label values -> that tuple; None once the garbage collector cleared it
}

impl LexicalCore {
    /// The text's first max_chars characters.
    fn cut<'py>(&self, text: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyString>> {
        let text = text.cast_into::<PyString>()?;
        if text.len()? <= self.max_chars {
            return Ok(text);
        }
        Ok(text.get_item(crate::bridge::slice(text.py(), 0, self.max_chars)?)?.cast_into::<PyString>()?)
    }

    /// The children of the trace's label set (None once the garbage collector cleared their maker).
    fn children_of<'py>(&self, event: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let Some(make) = &self.make_children else { return Ok(None) };
        let made = self.children.of(event, |raw| make.bind(event.py()).call1((raw,)))?;
        Ok(Some(made.cast_into::<PyTuple>()?))
    }
}

/// The text's units, from the cache's table (made by the scorer's Python when not held).
fn units_of<'py>(table: &Py<TextTable>, text: &Bound<'py, PyString>) -> PyResult<Bound<'py, LexicalUnits>> {
    let py = text.py();
    Ok(TextTable::get(table.bind(py), text)?.into_bound(py).cast_into::<LexicalUnits>()?)
}

fn observe(child: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
    if !value.is_none() {
        child.cast::<FastHistogram>()?.get().observe(value.extract()?);
    }
    Ok(())
}

#[pymethods]
impl LexicalCore {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (analyser, trace_type, scores_type, max_chars, chunks, questions, labels, max_children, *,
                        children))]
    fn new(analyser: Py<LexicalAnalyser>, trace_type: Py<PyType>, scores_type: Py<PyType>, max_chars: usize,
           chunks: Py<TextTable>, questions: Py<TextTable>, labels: Vec<Py<PyString>>, max_children: usize,
           children: Py<PyAny>, py: Python<'_>) -> PyResult<Self> {
        Ok(LexicalCore { analyser, trace_type, scores_type, max_chars, chunks, questions,
                         children: RawSeries::new(py, labels, max_children),
                         make_children: Some(children) })
    }

    /// The trace's lexical scores (None: no chunks with text, or no answer); `answer_text`, the answer without its
    /// citation markers when it cites, is scored instead of the answer.
    #[pyo3(signature = (event, answer_text = None))]
    fn score<'py>(&self, event: &Bound<'py, PyAny>, answer_text: Option<Bound<'py, PyAny>>)
                  -> PyResult<Option<Bound<'py, PyAny>>> {
        let py = event.py();
        let chunks = event.getattr(intern!(py, "chunks"))?;
        let answer = event.getattr(intern!(py, "answer"))?;
        if !chunks.is_truthy()? || answer.is_none() {
            return Ok(None); // no retrieval, or a failed run: nothing to score
        }
        let text = self.cut(answer_text.filter(|text| !text.is_none()).unwrap_or(answer))?;
        let mut contexts = Vec::new();
        for chunk in chunks.try_iter()? {
            let chunk_text = chunk?.getattr(intern!(py, "text"))?;
            if !chunk_text.is_none() {
                contexts.push(units_of(&self.chunks, &self.cut(chunk_text)?)?);
            }
        }
        if contexts.is_empty() {
            return Ok(None); // chunks reported without their text: nothing to score against
        }
        let question = units_of(&self.questions, &self.cut(event.getattr(intern!(py, "query"))?)?)?;
        let units: Vec<&Units> = contexts.iter().map(|context| &context.get().units).collect();
        let scores = self.analyser.get().score_units(&text, &question.get().units, &units)?;
        Ok(Some(self.scores_type.bind(py).call1(scores)?))
    }

    /// The stage: a trace's scores go on its envelope (for the judge sampler) and, unless it fell back (a refusal's
    /// scores only serve the sampler), into its label set's histograms.
    fn process<'py>(&self, envelope: Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = envelope.py();
        let event = envelope.getattr(intern!(py, "event"))?;
        if !event.is_instance(self.trace_type.bind(py))? {
            return Ok(envelope);
        }
        let scores = self.score(&event, Some(envelope.getattr(intern!(py, "answer_text"))?))?;
        envelope.setattr(intern!(py, "local_scores"), &scores)?;
        let Some(scores) = scores else { return Ok(envelope) };
        if !envelope.getattr(intern!(py, "fallback_rule"))?.is_none() {
            return Ok(envelope);
        }
        let Some(children) = self.children_of(&event)? else { return Ok(envelope) };
        observe(&children.get_item(0)?, &scores.getattr(intern!(py, "groundedness"))?)?;
        observe(&children.get_item(1)?, &scores.getattr(intern!(py, "answer_relevancy"))?)?;
        observe(&children.get_item(2)?, &scores.getattr(intern!(py, "context_relevance"))?)?;
        if scores.getattr(intern!(py, "number_mismatch"))?.is_truthy()? {
            children.get_item(3)?.cast::<FastCounter>()?.get().add(1.0);
        }
        Ok(envelope)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.chunks)?;
        visit.call(&self.questions)?;
        self.children.traverse(&visit)?;
        if let Some(make) = &self.make_children {
            visit.call(make)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.make_children = None;
    }
}
