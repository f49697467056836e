//! The lexical scorer's bindings (scorers/lexical.py): the analyser built from its word tables, and a text's units.
use pyo3::prelude::*;
use pyo3::types::{PyFrozenSet, PyString};
use std::collections::{HashMap, HashSet};

use crate::bridge::{guarded, with_text};
use crate::lexical;
use crate::simplified::Simplified;

/// (groundedness, answer relevancy, context relevance, number mismatch): scorers/lexical.py's LexicalScores.
pub(crate) type LexicalScoresTuple = (Option<f64>, Option<f64>, Option<f64>, bool);

/// The lexical scorer's text units (scorers/lexical.py), built once from its word tables.
#[pyclass(frozen, module = "ragpulse._native")]
pub struct LexicalAnalyser {
    tables: lexical::Tables,
}

#[pymethods]
impl LexicalAnalyser {
    #[new]
    fn new(
        units: Vec<(String, String)>, number_words: HashMap<String, String>, stopwords: HashSet<String>,
        cjk_digits: HashMap<char, u64>, cjk_units: Vec<String>, cjk_simplified: HashMap<char, char>,
    ) -> Self {
        let chars = |text: &str| text.chars().collect::<Vec<char>>();
        let units = units.into_iter().map(|(spelling, unit)| (chars(&spelling), unit)).collect();
        let cjk_units = cjk_units.iter().map(|unit| chars(unit)).collect();
        let number_words = number_words.iter().map(|(word, digits)| (chars(word), chars(digits))).collect();
        let stopwords = stopwords.iter().map(|word| chars(word)).collect();
        let cjk_digits = cjk_digits.into_iter().collect();
        let cjk_simplified = Simplified::new(cjk_simplified);
        LexicalAnalyser { tables: lexical::Tables { units, number_words, stopwords, cjk_digits, cjk_units, cjk_simplified } }
    }

    fn units(&self, text: &Bound<'_, PyString>) -> PyResult<LexicalUnits> {
        with_text(text, |text| Ok(LexicalUnits { units: guarded(|| lexical::units(text, &self.tables))? }))
    }

    /// scorers/lexical.py's `_words_only` of an ASCII part: None for any other.
    fn words_only(&self, part: &str) -> Option<String> {
        lexical::words_only_ascii(part, &self.tables)
    }

    /// The answer's units against its question's and its chunks' (groundedness, answer relevancy, context
    /// relevance, number mismatch); the answer's units never become Python objects.
    fn score(
        &self, answer: &Bound<'_, PyString>, question: &LexicalUnits, chunks: Vec<PyRef<'_, LexicalUnits>>,
    ) -> PyResult<LexicalScoresTuple> {
        let chunks: Vec<&lexical::Units> = chunks.iter().map(|chunk| &chunk.units).collect();
        self.score_units(answer, &question.units, &chunks)
    }
}

impl LexicalAnalyser {
    pub(crate) fn score_units(&self, answer: &Bound<'_, PyString>, question: &lexical::Units,
                              chunks: &[&lexical::Units]) -> PyResult<LexicalScoresTuple> {
        let s = with_text(answer, |answer| guarded(|| lexical::with_units(answer, &self.tables, |words, numbers| {
            lexical::score(words, &numbers, question, chunks)
        })))?;
        Ok((s.groundedness, s.answer_relevancy, s.context_relevance, s.number_mismatch))
    }
}

/// One text's lexical units, kept in the crate so that scoring reads them there: words (content words and CJK
/// bigrams), numbers as (value, unit) and the numbers' values, each a frozenset when read from Python.
#[pyclass(frozen, module = "ragpulse._native")]
pub struct LexicalUnits {
    pub(crate) units: lexical::Units,
}

#[pymethods]
impl LexicalUnits {
    #[getter]
    fn words<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyFrozenSet>> {
        PyFrozenSet::new(py, &self.units.words)
    }

    #[getter]
    fn numbers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyFrozenSet>> {
        PyFrozenSet::new(py, &self.units.numbers)
    }

    #[getter]
    fn values<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyFrozenSet>> {
        PyFrozenSet::new(py, self.units.numbers.iter().map(|(value, _)| value))
    }

    fn __sizeof__(&self) -> usize {
        std::mem::size_of::<Self>() + self.units.heap_bytes()
    }
}
