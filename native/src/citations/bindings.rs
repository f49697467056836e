//! The citation parser's bindings (scorers/citations.py): an answer and its chunks' ids in, the counts, the cited
//! sentences or the scan out as tuples, which scorers/citations.py turns into its records.
use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use crate::bridge::{guarded, new_str, with_text};

use super::{may_cite, own, scan, without_definitions, Marker, Owned, Resolver};

/// Each chunk's id (None for a chunk without one): ASCII read in place, the rest as UTF-8 of its own.
fn read_ids<'a>(ids: &'a [Option<Bound<'_, PyString>>]) -> PyResult<Vec<Option<Cow<'a, str>>>> {
    ids.iter()
        .map(|id| match id {
            None => Ok(None),
            // SAFETY: a live str, held by `ids`; the macro reads its state flags.
            Some(id) if unsafe { pyo3::ffi::PyUnicode_IS_ASCII(id.as_ptr()) } != 0 => Ok(Some(Cow::Borrowed(id.to_str()?))),
            Some(id) => with_text(id, |text| Ok(Some(Cow::Owned(text.to_owned())))),
        })
        .collect()
}

/// The answer's text and a resolver of its chunk ids, given to `work`; folding case as Python's str.casefold does.
fn with_answer<'py, T>(answer: &Bound<'py, PyString>, chunk_ids: Vec<Option<Bound<'py, PyString>>>,
                       work: impl FnOnce(&str, &mut Resolver<'_>) -> PyResult<T>) -> PyResult<T> {
    let py = answer.py();
    let owned = read_ids(&chunk_ids)?;
    let ids: Vec<Option<&str>> = owned.iter().map(|id| id.as_deref()).collect();
    let fold = |text: &str| -> String {
        let folded = PyString::new(py, text).call_method0("casefold");
        folded.and_then(|folded| folded.extract::<String>()).unwrap_or_else(|_| text.to_owned())
    };
    let mut resolver = Resolver::new(&ids, &fold);
    with_text(answer, |text| work(text, &mut resolver))
}

/// The answer's inline citations; None when it cites nothing.
fn owned<T>(answer: &str, resolver: &mut Resolver<'_>, then: impl FnOnce(&Owned<'_>) -> PyResult<T>) -> PyResult<Option<T>> {
    if !may_cite(answer) {
        return Ok(None);
    }
    let cleaned = without_definitions(answer);
    match guarded(|| own(&cleaned, resolver))? {
        Some(found) => then(&found).map(Some),
        None => Ok(None),
    }
}

/// scorers/citations.py's count_inline: (the answer without its markers, cited sentences, uncited ones, resolved
/// markers, dangling ones, over_cap); None when it cites nothing.
#[pyfunction]
pub fn count_inline<'py>(answer: &Bound<'py, PyString>, chunk_ids: Vec<Option<Bound<'py, PyString>>>)
                         -> PyResult<Option<Bound<'py, PyTuple>>> {
    let py = answer.py();
    with_answer(answer, chunk_ids, |text, resolver| {
        owned(text, resolver, |found| {
            let cited = found.owners.len();
            let text = new_str(py, &found.scan.text)?;
            (text, cited, found.sentences.len() - cited, found.resolved, found.dangling, found.scan.over_cap).into_pyobject(py)
        })
    })
}

/// A cited sentence: (its text, the chunks it cites, its dangling markers as written), each deduplicated in order.
fn cited<'py, 'm, 't: 'm>(py: Python<'py>, sentence: &str, markers: impl Iterator<Item = &'m Marker<'t>>)
                          -> PyResult<Bound<'py, PyTuple>> {
    let (mut chunks, mut dangling): (Vec<usize>, Vec<&str>) = (Vec::new(), Vec::new());
    for marker in markers {
        match marker.index {
            Some(index) if !chunks.contains(&index) => chunks.push(index),
            None if !dangling.contains(&marker.written.as_ref()) => dangling.push(&marker.written),
            _ => {}
        }
    }
    let dangling = dangling.into_iter().map(|written| new_str(py, written)).collect::<PyResult<Vec<_>>>()?;
    (new_str(py, sentence)?, PyTuple::new(py, chunks)?, PyTuple::new(py, dangling)?).into_pyobject(py)
}

/// scorers/citations.py's parse_citations: ([(sentence, chunks, dangling)], uncited, resolved, dangling, over_cap);
/// None when it cites nothing.
#[pyfunction]
pub fn parse_citations<'py>(answer: &Bound<'py, PyString>, chunk_ids: Vec<Option<Bound<'py, PyString>>>)
                            -> PyResult<Option<Bound<'py, PyTuple>>> {
    let py = answer.py();
    with_answer(answer, chunk_ids, |text, resolver| {
        owned(text, resolver, |found| {
            let sentences = PyList::empty(py);
            for (owner, groups) in &found.owners {
                let markers = found.scan.placed[groups.clone()].iter().flat_map(|(_, markers)| markers);
                sentences.append(cited(py, &found.scan.text[found.sentences[*owner].clone()], markers)?)?;
            }
            let uncited = found.sentences.len() - found.owners.len();
            (sentences, uncited, found.resolved, found.dangling, found.scan.over_cap).into_pyobject(py)
        })
    })
}

/// Character offsets of increasing byte offsets into `text`.
fn char_offsets(text: &str, bytes: impl Iterator<Item = usize>) -> Vec<usize> {
    let (mut at, mut chars) = (0, 0);
    bytes.map(|byte| {
        chars += text[at..byte].chars().count();
        at = byte;
        chars
    }).collect()
}

/// scorers/citations.py's _read: (the answer without its definition lines and the markers read, each group read as
/// (its position in that text, [(written, chunk index or None)]), the length read, over_cap), positions in characters.
#[pyfunction]
pub fn scan_citations<'py>(answer: &Bound<'py, PyString>, chunk_ids: Vec<Option<Bound<'py, PyString>>>)
                           -> PyResult<Bound<'py, PyTuple>> {
    let py = answer.py();
    with_answer(answer, chunk_ids, |text, resolver| {
        let cleaned = without_definitions(text);
        let found = guarded(|| scan(&cleaned, resolver))?;
        let mut offsets = char_offsets(&found.text, found.placed.iter().map(|(position, _)| *position).chain([found.read]));
        let read = offsets.pop().unwrap_or(0);
        let placed = PyList::empty(py);
        for ((_, markers), position) in found.placed.iter().zip(offsets) {
            let group = PyList::empty(py);
            for marker in markers {
                group.append((new_str(py, &marker.written)?, marker.index))?;
            }
            placed.append((position, group))?;
        }
        (new_str(py, &found.text)?, placed, read, found.over_cap).into_pyobject(py)
    })
}
