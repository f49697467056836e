//! The local judge's chunk analysis bindings (judging/chunk_analysis.py, judging/local_judge.py): a chunk held in the
//! crate, and the trace's chunks as one context that aligns a claim, answers what the chunks say and gives a clause
//! back as scorers/text.py's Clause fields when a verdict reads it.
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFrozenSet, PyString, PyTuple};

use crate::align::{self, Key};
use crate::bridge::{guarded, new_str, with_text};
use crate::chunk::{self, allocated, part_terms, Chunk, StoredClause};
use crate::clause::Quantity;
use rustc_hash::FxHashMap;

/// A chunk's analysis, held in the crate (native/src/chunk.rs): what the local judge's cache keeps of a chunk.
#[pyclass(frozen, module = "ragpulse._native", name = "ChunkAnalysis")]
pub struct PyChunk {
    pub chunk: Chunk,
}

#[pymethods]
impl PyChunk {
    fn __len__(&self) -> usize {
        self.chunk.len()
    }

    /// The object (its header and fields) and every allocation it holds, as malloc sizes them.
    fn __sizeof__(&self) -> usize {
        allocated(2 * std::mem::size_of::<usize>() + std::mem::size_of::<Self>()) + self.chunk.heap_bytes()
    }

}

/// How many of the question's terms are each chunk's question terms (the question read once for all of them).
#[pyfunction]
pub fn topics_shared(chunks: Vec<Py<PyChunk>>, question: &Bound<'_, PyFrozenSet>) -> PyResult<Vec<usize>> {
    let terms = texts(question.iter())?;
    Ok(chunks.iter().map(|chunk| terms.iter().filter(|term| chunk.get().chunk.topic.contains(term)).count()).collect())
}

pub fn texts<'py>(items: impl Iterator<Item = Bound<'py, PyAny>>) -> PyResult<Vec<String>> {
    items.map(|item| {
        let item = item.cast_into::<PyString>().map_err(|_| PyValueError::new_err("a term is a str"))?;
        with_text(&item, |text| Ok(text.to_owned()))
    }).collect()
}

/// A claim's sets as the crate reads them: its keys (its terms, then its quantities but NaN ones), its size (terms
/// and quantities), its quantities, its English words and its CJK parts.
pub struct ClaimSets {
    pub keys: Vec<Key>,
    pub size: usize,
    pub quantities: Vec<Quantity>,
    pub words: Vec<String>,
    pub parts: Vec<Vec<char>>,
}

impl ClaimSets {
    pub fn read(
        terms: &Bound<'_, PyFrozenSet>, quantities: &Bound<'_, PyFrozenSet>, words: &Bound<'_, PyFrozenSet>,
        parts: &Bound<'_, PyTuple>,
    ) -> PyResult<ClaimSets> {
        let mut read = Vec::with_capacity(quantities.len());
        for quantity in quantities.iter() {
            read.push(quantity.extract().map_err(|_| PyValueError::new_err("a quantity is (str, float)"))?);
        }
        let parts = texts(parts.iter())?.iter().map(|part| part.chars().collect()).collect();
        Ok(ClaimSets::new(texts(terms.iter())?, read, texts(words.iter())?, parts))
    }

    /// The sets of a claim's terms (distinct), quantities (distinct as in a frozenset), words and CJK parts.
    pub fn new(terms: Vec<String>, quantities: Vec<Quantity>, words: Vec<String>, parts: Vec<Vec<char>>) -> ClaimSets {
        let size = terms.len() + quantities.len();
        let mut keys: Vec<Key> = terms.into_iter().map(Key::Term).collect();
        keys.extend(quantities.iter().filter_map(|(dimension, value)| Key::quantity(dimension.clone(), *value)));
        ClaimSets { keys, size, quantities, words, parts }
    }

    /// The claim's terms.
    pub fn terms(&self) -> impl Iterator<Item = &str> {
        self.keys.iter().filter_map(|key| match key {
            Key::Term(term) => Some(term.as_str()),
            Key::Quantity(..) => None,
        })
    }
}

/// A claim's alignment as Python reads it: (the best clause's Dice, its position, those within the margin of it, its
/// text, the claim's terms it lacks, its terms the claim lacks).
pub type Aligned = Option<(f64, usize, Vec<usize>, String, usize, usize)>;

/// A trace's chunks as the local judge reads them together: their clauses numbered on from one chunk to the next.
#[pyclass(frozen, module = "ragpulse._native", name = "ChunkContext")]
pub struct PyContext {
    chunks: Vec<Py<PyChunk>>,
}

impl PyContext {
    pub fn chunks(&self) -> Vec<&Chunk> {
        self.chunks.iter().map(|chunk| &chunk.get().chunk).collect()
    }

    pub fn any(&self, question: impl Fn(&Chunk) -> bool) -> bool {
        self.chunks.iter().any(|chunk| question(&chunk.get().chunk))
    }

    /// ChunkContext.evidence of a claim's sets as read.
    pub fn evidence_of(&self, claim: &ClaimSets, margin: f64) -> PyResult<(f64, f64, Aligned)> {
        let ClaimSets { keys, size, quantities, words, parts } = claim;
        let chunks = self.chunks();
        // Each of the claim's terms looked up once in each chunk's vocabulary: the alignment and the support read the
        // same lookups (the binary searches were most of a Chinese claim's evidence). One vector, a key's ids chunk after
        // chunk (a vector a key was thirty allocations a Chinese claim).
        let mut ids: Vec<Option<usize>> = Vec::with_capacity(keys.len() * chunks.len());
        for key in keys {
            ids.extend(chunks.iter().map(|chunk| match key {
                Key::Term(term) => chunk.vocab.find(term),
                Key::Quantity(..) => None,
            }));
        }
        let ids_of = |key: usize| &ids[key * chunks.len()..(key + 1) * chunks.len()];
        let holding = |key: usize, index: usize| match &keys[key] {
            Key::Term(_) => ids_of(key)[index].map_or(&[][..], |id| chunks[index].holding_id(id)),
            quantity => chunks[index].holding(quantity),
        };
        // sized for its keys up front: growing the tables was a tenth of the call
        let mut anywhere: FxHashMap<&str, bool> = FxHashMap::with_capacity_and_hasher(keys.len(), Default::default());
        anywhere.extend(keys.iter().enumerate().filter_map(|(n, key)| match key {
            Key::Term(term) => Some((term.as_str(), ids_of(n).iter().any(Option::is_some))),
            Key::Quantity(..) => None,
        }));
        let has_term = |term: &str| {
            anywhere.get(term).copied().unwrap_or_else(|| chunks.iter().any(|chunk| chunk.has_term(term)))
        };
        let clauses = || chunks.iter().flat_map(|chunk| chunk.clauses.iter());
        // the claim's quantities that a clause has, in digits or in words ("eleven players" supports "11 players"; -0.0
        // is 0.0, a NaN equals none)
        let held = quantities.iter().filter(|(dimension, value)| {
            clauses().any(|c| c.quantities.iter().chain(c.spelled.iter()).any(|(held, held_value)| held_value == value && held == dimension))
        });
        let supported = guarded(|| chunk::supported_with(&chunks, words, parts, has_term))? + held.count() as f64;
        let Some(found) = guarded(|| align::align_by(keys.len(), *size, &chunks, margin, holding))? else {
            return Ok((supported, 0.0, None));
        };
        let (index, best) = self.at_index(found.best).expect("the alignment's best clause is the context's");
        let chunk = chunks[index];
        // the terms' ids in the best clause's chunk, as looked up above
        let mut claim_terms: FxHashMap<&str, Option<usize>> = FxHashMap::with_capacity_and_hasher(keys.len(), Default::default());
        claim_terms.extend(keys.iter().enumerate().filter_map(|(n, key)| match key {
            Key::Term(term) => Some((term.as_str(), ids_of(n)[index])),
            Key::Quantity(..) => None,
        }));
        let (by_best, claim_only, best_only) =
            guarded(|| chunk::against(chunk, best, &claim_terms, words, parts, quantities))?;
        Ok((supported, by_best, Some((found.dice, found.best, found.near, best.text.to_string(), claim_only, best_only))))
    }

    /// The clause at a position, numbered on from one chunk to the next, with its chunk.
    pub fn at(&self, position: usize) -> Option<(&Chunk, &StoredClause)> {
        self.at_index(position).map(|(index, clause)| (&self.chunks[index].get().chunk, clause))
    }

    /// The clause at a position, with its chunk's index.
    fn at_index(&self, mut position: usize) -> Option<(usize, &StoredClause)> {
        for (index, chunk) in self.chunks.iter().enumerate() {
            let chunk = &chunk.get().chunk;
            if position < chunk.len() {
                return Some((index, &chunk.clauses[position]));
            }
            position -= chunk.len();
        }
        None
    }
}

#[pymethods]
impl PyContext {
    #[new]
    fn new(chunks: Vec<Py<PyChunk>>) -> Self {
        PyContext { chunks }
    }

    fn __len__(&self) -> usize {
        self.chunks().iter().map(|chunk| chunk.len()).sum()
    }

    /// Each sentence's number of clauses, chunk after chunk.
    fn sentences(&self) -> Vec<usize> {
        let mut sizes = Vec::new();
        for chunk in self.chunks() {
            let mut start = 0;
            for end in chunk.sentence_ends.iter() {
                sizes.push(*end as usize - start);
                start = *end as usize;
            }
        }
        sizes
    }

    /// The clause at this position as scorers/text.py's Clause fields: (text, terms, words, cjk_parts, chars,
    /// sequence, quantities, names, negated, governed, spelled), as Analyser::clause gave them.
    fn clause<'py>(&self, py: Python<'py>, position: usize) -> PyResult<Bound<'py, PyTuple>> {
        let (chunk, c) = self.at(position).ok_or_else(|| PyIndexError::new_err("no clause at this position"))?;
        // each word and character made into a str once: a word is a term and in the sequence, a character in the
        // sequence and the characters
        let words: Vec<Bound<'py, PyString>> =
            c.words.iter().map(|id| PyString::new(py, chunk.vocab.get(*id as usize))).collect();
        let letters: Vec<Bound<'py, PyString>> =
            c.parts.chars().map(|letter| new_str(py, letter.encode_utf8(&mut [0; 4]))).collect::<PyResult<_>>()?;
        let mut cjk_terms: Vec<PyResult<Bound<'py, PyString>>> = Vec::new();
        part_terms(c.parts(), |term| cjk_terms.push(new_str(py, term)));
        let cjk_terms: Vec<Bound<'py, PyString>> = cjk_terms.into_iter().collect::<PyResult<_>>()?;
        let parts: Vec<&str> = c.parts().collect();
        let sequence: Vec<Bound<'py, PyString>> = words.iter().chain(&letters).cloned().collect();
        let items: [Bound<'py, PyAny>; 11] = [
            PyString::new(py, &c.text).into_any(), PyFrozenSet::new(py, words.iter().chain(&cjk_terms))?.into_any(),
            PyFrozenSet::new(py, &words)?.into_any(), PyTuple::new(py, &parts)?.into_any(),
            PyFrozenSet::new(py, &letters)?.into_any(), PyTuple::new(py, sequence)?.into_any(),
            PyFrozenSet::new(py, c.quantities.iter())?.into_any(), PyFrozenSet::new(py, c.names.iter())?.into_any(),
            PyBool::new(py, c.negated).to_owned().into_any(), PyFrozenSet::new(py, c.governed.iter())?.into_any(),
            PyFrozenSet::new(py, c.spelled.iter())?.into_any(),
        ];
        PyTuple::new(py, items)
    }

    /// A claim against the chunks in one call (its sets read once): what of it the chunks support
    /// (scorers/text.py's supported_units against all they say), what its best aligned clause supports (0.0 when
    /// none aligns), and its alignment by the Dice of its terms and quantities: None when no clause shares a term or a
    /// quantity, else (the best clause's Dice, its position, the positions within `margin` of it, its text, how many
    /// of the claim's terms it lacks, how many of its terms the claim lacks). The clause itself is made for Python
    /// only when a rule reads more of it (judging/local_judge.py).
    fn evidence(
        &self, terms: &Bound<'_, PyFrozenSet>, quantities: &Bound<'_, PyFrozenSet>, words: &Bound<'_, PyFrozenSet>,
        parts: &Bound<'_, PyTuple>, margin: f64,
    ) -> PyResult<(f64, f64, Aligned)> {
        self.evidence_of(&ClaimSets::read(terms, quantities, words, parts)?, margin)
    }

    /// Whether the clause at this position is negated.
    fn negated(&self, position: usize) -> PyResult<bool> {
        self.at(position).map(|(_, c)| c.negated).ok_or_else(|| PyIndexError::new_err("no clause at this position"))
    }

    /// The positions of the clauses that have this term.
    fn holding(&self, term: &Bound<'_, PyString>) -> PyResult<Vec<usize>> {
        with_text(term, |term| {
            let mut offset = 0;
            let mut positions = Vec::new();
            for chunk in self.chunks() {
                positions.extend(chunk.holding_term(term).iter().map(|position| offset + *position as usize));
                offset += chunk.len();
            }
            Ok(positions)
        })
    }

    fn has_term(&self, term: &Bound<'_, PyString>) -> PyResult<bool> {
        with_text(term, |term| Ok(self.any(|chunk| chunk.has_term(term))))
    }

    fn has_name(&self, name: &Bound<'_, PyString>) -> PyResult<bool> {
        with_text(name, |name| Ok(self.any(|chunk| chunk.has_name(name))))
    }

    /// Whether a term of the chunks starts with this.
    fn has_term_starting(&self, root: &Bound<'_, PyString>) -> PyResult<bool> {
        with_text(root, |root| Ok(self.any(|chunk| chunk.vocab.iter().any(|term| term.starts_with(root)))))
    }

    /// Those of the claim's terms that the clause at `position` lacks and the chunks say only negated (a negated
    /// clause negates the term, and no other clause has it).
    fn only_negated(&self, terms: &Bound<'_, PyFrozenSet>, position: usize) -> PyResult<Vec<String>> {
        let (chunk, clause) = self.at(position).ok_or_else(|| PyIndexError::new_err("no clause at this position"))?;
        Ok(texts(terms.iter())?.into_iter().filter(|term| {
            !chunk::clause_has(chunk, clause, term) && self.any(|chunk| chunk.negates(term))
                && !self.any(|chunk| chunk.affirms(term))
        }).collect())
    }

    /// Those of a claim's quantities that a clause of the chunks has among its quantities, or (`spelled`) among its
    /// bare counts in words: the claim's set & the chunks' (a NaN equal to none), without making the chunks' set of
    /// every quantity (in Python, with each judgment, 6% of a Chinese one).
    #[pyo3(signature = (quantities, spelled=false))]
    fn held<'py>(&self, quantities: &Bound<'py, PyFrozenSet>, spelled: bool) -> PyResult<Bound<'py, PyFrozenSet>> {
        let chunks = self.chunks();
        let mut found = Vec::new();
        for quantity in quantities.iter() {
            let (dimension, value): (String, f64) =
                quantity.extract().map_err(|_| PyValueError::new_err("a quantity is (str, float)"))?;
            let clauses = chunks.iter().flat_map(|chunk| chunk.clauses.iter());
            // -0.0 == 0.0 and a NaN equals nothing, as Python's tuples compare two quantities made apart
            if clauses.flat_map(|c| if spelled { &c.spelled } else { &c.quantities }.iter())
                .any(|(held, held_value)| *held_value == value && *held == dimension)
            {
                found.push(quantity);
            }
        }
        PyFrozenSet::new(quantities.py(), found)
    }
}
