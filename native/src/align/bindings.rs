//! The local judge's alignment bindings (judging/local_judge.py): a chunk's clause index, and a claim aligned
//! with the indexes of its chunks.
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyFrozenSet, PyString};

use crate::align;
use crate::bridge::{guarded, with_text};

/// A key as Python's dict holds it: a term (str) or a quantity ((dimension, value)); None for a NaN quantity.
fn key_of(key: &Bound<'_, PyAny>) -> PyResult<Option<align::Key>> {
    if let Ok(term) = key.cast::<PyString>() {
        return with_text(term, |term| Ok(Some(align::Key::Term(term.to_owned()))));
    }
    let (dimension, value): (String, f64) = key
        .extract()
        .map_err(|_| PyValueError::new_err("a clause key is a term (str) or a quantity ((str, float))"))?;
    Ok(align::Key::quantity(dimension, value))
}

/// A clause's keys (its terms, then its quantities) and its size, NaN quantities counted but without a key.
fn clause_keys(terms: &Bound<'_, PyFrozenSet>, quantities: &Bound<'_, PyFrozenSet>) -> PyResult<(Vec<align::Key>, u32)> {
    let mut keys = Vec::with_capacity(terms.len() + quantities.len());
    for key in terms.iter().chain(quantities.iter()) {
        keys.extend(key_of(&key)?);
    }
    Ok((keys, (terms.len() + quantities.len()) as u32))
}

/// A chunk's clauses by their terms and quantities, for the local judge's alignment (judging/local_judge.py).
#[pyclass(frozen, module = "ragpulse._native", name = "ClauseIndex")]
pub struct PyClauseIndex {
    index: align::ClauseIndex,
}

#[pymethods]
impl PyClauseIndex {
    /// From each clause's (terms, quantities), in order: a clause's position is its place in the list.
    #[new]
    fn new(clauses: Vec<(Bound<'_, PyFrozenSet>, Bound<'_, PyFrozenSet>)>) -> PyResult<Self> {
        let keyed = clauses.iter().map(|(terms, quantities)| clause_keys(terms, quantities)).collect::<PyResult<_>>()?;
        Ok(PyClauseIndex { index: guarded(|| align::ClauseIndex::new(keyed))? })
    }

    /// The positions of the clauses that have this term or quantity.
    fn positions(&self, key: &Bound<'_, PyAny>) -> PyResult<Vec<u32>> {
        Ok(key_of(key)?.map_or_else(Vec::new, |key| self.index.positions(&key).to_vec()))
    }

    fn __len__(&self) -> usize {
        self.index.len()
    }

    fn __sizeof__(&self) -> usize {
        std::mem::size_of::<Self>() + self.index.heap_bytes()
    }
}

/// The claim (its terms and quantities) aligned with the clauses of the indexes, each at its offset: (Dice of the
/// best clause, its position, the positions within `margin` of it), or None when no clause shares a key. The
/// offsets run on from 0, each index after the one before.
#[pyfunction]
pub fn align_claim(
    terms: &Bound<'_, PyFrozenSet>,
    quantities: &Bound<'_, PyFrozenSet>,
    located: Vec<(usize, PyRef<'_, PyClauseIndex>)>,
    margin: f64,
) -> PyResult<Option<(f64, usize, Vec<usize>)>> {
    let (keys, size) = clause_keys(terms, quantities)?;
    let indexes: Vec<(usize, &align::ClauseIndex)> = located.iter().map(|(offset, index)| (*offset, &index.index)).collect();
    let mut next = 0; // each index's clauses follow the previous one's: the counts are one array that long
    for (offset, index) in &indexes {
        if *offset != next {
            return Err(PyValueError::new_err(format!("an index at offset {offset} where {next} was due")));
        }
        next += index.len();
    }
    let found = guarded(|| align::align(&keys, size as usize, &indexes, margin))?;
    Ok(found.map(|found| (found.dice, found.best, found.near)))
}
