//! The local judge's text analysis bindings (scorers/text.py): the analyser built from its translated patterns
//! and word tables, the CJK coverage of a clause, Snowball stemming, and the crate's regex engine for the tests
//! of the patterns' translation (scorers/crate_regex.py).
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFrozenSet, PyList, PyString, PyTuple};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::bridge::{guarded, new_str, with_text};
use crate::chunk::{bindings::PyChunk, Chunk};
use crate::clause;
use crate::clause::memo::StemMemo;
use crate::simplified::Simplified;
use crate::split;

/// A translated pattern as the analyser runs it. A pattern with a lookaround (every Python \b is one) runs on
/// fancy-regex's backtracking VM, which without a seek tries every position of the text; with it, the regex crate
/// first finds where the pattern less its lookarounds can start (with scorers/crate_regex.py's one-sided \b, an
/// English clause of FaithBench's: 31 → 12 µs).
fn compiled(pattern: &str) -> Result<fancy_regex::Regex, fancy_regex::Error> {
    fancy_regex::RegexBuilder::new(pattern).seek(true).build()
}

/// A pattern the analysis matches at a position it knows (en_quantity, en_value, cjk_next: each ends in an alternative that
/// matches anything there), without the seek, whose search for a start ran over the rest of the text first.
fn at_position(pattern: &str) -> Result<fancy_regex::Regex, fancy_regex::Error> {
    fancy_regex::RegexBuilder::new(pattern).seek(false).build()
}

/// The local judge's text analysis (scorers/text.py), built once from its translated patterns and word tables.
#[pyclass(frozen, module = "ragpulse._native")]
pub struct TextAnalyser {
    pub analyser: clause::Analyser,
}

fn table<'py, T: for<'a> FromPyObject<'a, 'py>>(tables: &Bound<'py, PyDict>, name: &str) -> PyResult<T> {
    match tables.get_item(name)? {
        Some(value) => value.extract::<T>().map_err(|_| PyValueError::new_err(format!("table {name}: not of its type"))),
        None => Err(PyValueError::new_err(format!("table {name} missing"))),
    }
}

#[pymethods]
impl TextAnalyser {
    #[new]
    fn new(patterns: &Bound<'_, PyDict>, tables: &Bound<'_, PyDict>) -> PyResult<Self> {
        let pattern = |name: &str| -> PyResult<fancy_regex::Regex> {
            let source: String = table(patterns, name)?;
            let build = if matches!(name, "en_quantity" | "en_value" | "cjk_next") { at_position } else { compiled };
            build(&source).map_err(|err| PyValueError::new_err(format!("pattern {name}: {err}")))
        };
        for (name, scanned) in [("latin_word", clause::LATIN_WORD), ("name", clause::NAME), ("list_item", clause::LIST_ITEM)] {
            if table::<String>(patterns, name)? != scanned {
                return Err(PyValueError::new_err(format!("pattern {name}: native/src/clause.rs scans another; change its scan")));
            }
        }
        let starts: String = table(patterns, "quantity_start")?;
        let patterns = clause::Patterns {
            leading_answer: pattern("leading_answer")?, en_not_negations: pattern("en_not_negations")?,
            cjk_leading_answer: pattern("cjk_leading_answer")?, en_quantity: pattern("en_quantity")?,
            en_value: pattern("en_value")?,
            latin_in_cjk: pattern("latin_in_cjk")?, cjk_function_or_negator: pattern("cjk_function_or_negator")?,
            cjk_quantity: pattern("cjk_quantity")?,
            polarity_token: pattern("polarity_token")?, any_negator: pattern("any_negator")?, en_free_compound: pattern("en_free_compound")?,
            cjk_next: pattern("cjk_next")?, cjk_week: pattern("cjk_week")?,
        };
        let tables = clause::Tables {
            stopwords: table(tables, "stopwords")?, chatter: table(tables, "chatter")?,
            cjk_function: table(tables, "cjk_function")?, cjk_negators: table(tables, "cjk_negators")?,
            not_negations: table(tables, "not_negations")?, en_negators: table(tables, "en_negators")?,
            quantity_words: table(tables, "quantity_words")?, quantity_start_words: table(tables, "quantity_start_words")?,
            en_units: table(tables, "en_units")?, currency_sign: table(tables, "currency_sign")?,
            number_words: table(tables, "number_words")?, scales: table(tables, "scales")?,
            minutes: table(tables, "minutes")?, rate_minutes: table(tables, "rate_minutes")?, half: table(tables, "half")?,
            cjk_units: table(tables, "cjk_units")?, cjk_digits: table(tables, "cjk_digits")?,
            not_counts: table(tables, "not_counts")?, scope_ends: table(tables, "scope_ends")?,
            scope: table(tables, "scope")?, question_stopwords: table(tables, "question_stopwords")?,
            cjk_places: clause::places_by_first_char(table(tables, "cjk_places")?),
            cjk_simplified: Simplified::new(table::<FxHashMap<char, char>>(tables, "cjk_simplified")?),
        };
        if !clause::scans_starts(&starts, &tables.quantity_start_words, &tables.scales) {
            return Err(PyValueError::new_err("pattern quantity_start: native/src/clause.rs scans another; change its scan"));
        }
        Ok(TextAnalyser { analyser: clause::Analyser::new(patterns, tables) })
    }

    /// The stemmed content words of lower-cased text.
    fn words(&self, lower: &Bound<'_, PyString>) -> PyResult<Vec<String>> {
        with_text(lower, |lower| guarded(|| self.analyser.words(lower)))
    }

    fn question_terms<'py>(&self, py: Python<'py>, text: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyFrozenSet>> {
        PyFrozenSet::new(py, &with_text(text, |text| guarded(|| self.analyser.question_terms(text)))?)
    }

    /// A chunk's analysis from its sentences as their clauses' texts, its question terms from `text`
    /// (judging/chunk_analysis.py): held in the crate (native/src/chunk.rs).
    fn chunk(&self, sentences: Vec<Vec<Bound<'_, PyString>>>, text: &Bound<'_, PyString>) -> PyResult<PyChunk> {
        let mut parsed = Vec::with_capacity(sentences.len());
        for sentence in &sentences {
            let mut clauses = Vec::with_capacity(sentence.len());
            for part in sentence {
                clauses.push(with_text(part, |part| Ok((part.to_owned(), guarded(|| self.analyser.clause(part))?)))?);
            }
            parsed.push(clauses);
        }
        let topic = with_text(text, |text| guarded(|| self.analyser.question_terms(text)))?;
        Ok(PyChunk { chunk: guarded(|| Chunk::new(parsed, topic))? })
    }

    /// len(question & question_terms(text)): what of the question's terms the text has (Analyser::question_shared),
    /// its words' stems from `memo` when given.
    #[pyo3(signature = (question, text, memo = None))]
    fn question_shared(
        &self, question: &Bound<'_, PyFrozenSet>, text: &Bound<'_, PyString>, memo: Option<PyRef<'_, StemMemo>>,
    ) -> PyResult<usize> {
        let mut terms = FxHashSet::default();
        for term in question.iter() {
            let term = term.cast_into::<PyString>().map_err(|_| PyValueError::new_err("a question term is a str"))?;
            terms.insert(with_text(&term, |term| Ok(term.to_owned()))?);
        }
        with_text(text, |text| guarded(|| self.analyser.question_shared(&terms, text, memo.as_deref())))
    }

    /// A clause's analysis: (terms, words, cjk_parts, chars, sequence, quantities, names, negated, governed,
    /// spelled), the fields of scorers/text.py's Clause after its text.
    fn clause<'py>(&self, py: Python<'py>, text: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyTuple>> {
        clause_fields(py, &with_text(text, |text| guarded(|| self.analyser.clause(text)))?)
    }
}

/// A clause's analysis as TextAnalyser.clause gives it: the fields of scorers/text.py's Clause after its text.
pub fn clause_fields<'py>(py: Python<'py>, c: &clause::Clause) -> PyResult<Bound<'py, PyTuple>> {
    // the frozensets drop repeated quantities, as Python's did
    // Each string made into a str once: its words are terms and sequence too, its CJK characters chars,
    // sequence and one-character terms (made again for each, the strs were a sixth of an English clause's cost).
    let mut made: FxHashMap<&str, Bound<'py, PyString>> =
        FxHashMap::with_capacity_and_hasher(c.terms.len() + c.sequence.len(), Default::default());
    for item in c.terms.iter().chain(&c.sequence) {
        if !made.contains_key(item.as_str()) {
            made.insert(item, new_str(py, item)?);
        }
    }
    let str_of = |item: &String| made[item.as_str()].clone();
    // the sequence ends in the characters of the CJK parts, one by one
    let letters = c.parts.iter().map(|part| part.chars().count()).sum::<usize>();
    let chars = &c.sequence[c.sequence.len() - letters..];
    let items: [Bound<'py, PyAny>; 10] = [
        PyFrozenSet::new(py, c.terms.iter().map(str_of))?.into_any(),
        PyFrozenSet::new(py, c.words.iter().map(str_of))?.into_any(),
        PyTuple::new(py, &c.parts)?.into_any(), PyFrozenSet::new(py, chars.iter().map(str_of))?.into_any(),
        PyTuple::new(py, c.sequence.iter().map(str_of))?.into_any(),
        PyFrozenSet::new(py, &c.quantities)?.into_any(), PyFrozenSet::new(py, &c.names)?.into_any(),
        PyBool::new(py, c.negated).to_owned().into_any(), PyFrozenSet::new(py, &c.governed)?.into_any(),
        PyFrozenSet::new(py, &c.spelled)?.into_any(),
    ];
    PyTuple::new(py, items)
}

/// The pieces of a text that `cut` gives, as a list of str.
fn pieces<'py>(text: &Bound<'py, PyString>, cut: fn(&str) -> Vec<&str>) -> PyResult<Bound<'py, PyList>> {
    with_text(text, |read| PyList::new(text.py(), guarded(|| cut(read))?))
}

/// The text's sentences: scorers/text.py's sentences() (native/src/split.rs).
#[pyfunction]
pub fn sentences<'py>(text: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyList>> {
    pieces(text, split::sentences)
}

/// The text's clauses, sentence after sentence: scorers/text.py's clauses() (native/src/split.rs).
#[pyfunction]
pub fn clauses<'py>(text: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyList>> {
    pieces(text, split::clauses)
}

/// Every match of a pattern in each text, as (start, end) in characters, as Python's finditer gives them: what
/// tests/test_crate_regex.py holds scorers/crate_regex.py's translations of the Python patterns to.
#[pyfunction]
pub fn regex_spans(pattern: &str, texts: Vec<String>) -> PyResult<Vec<Vec<(usize, usize)>>> {
    let regex = compiled(pattern).map_err(|err| PyValueError::new_err(format!("pattern: {err}")))?;
    texts
        .iter()
        .map(|text| {
            let chars_before: Vec<usize> = text.char_indices().map(|(at, _)| at).chain([text.len()]).collect();
            let at = |byte: usize| chars_before.partition_point(|&start| start < byte);
            regex
                .find_iter(text)
                .map(|found| found.map(|found| (at(found.start()), at(found.end()))))
                .collect::<Result<_, _>>()
                .map_err(|err| PyValueError::new_err(format!("matching: {err}")))
        })
        .collect()
}

/// How many characters of the CJK parts lie in a bigram (or a one-character part) that is in `found`, a character
/// that is only in `chars` counting half: scorers/text.py's cjk_covered, which says why.
#[pyfunction]
pub fn cjk_covered(
    parts: &Bound<'_, PyTuple>, found: &Bound<'_, PyFrozenSet>, chars: &Bound<'_, PyFrozenSet>,
) -> PyResult<f64> {
    let py = parts.py();
    let mut covered = 0.0; // halves and wholes: exact in a float
    let mut pair = String::with_capacity(8);
    for part in parts.iter() {
        let part = part.cast_into::<PyString>().map_err(|_| PyValueError::new_err("a CJK part is a str"))?;
        let letters: Vec<char> = with_text(&part, |part| Ok(part.chars().collect()))?;
        if letters.len() == 1 {
            covered += if found.contains(&part)? { 1.0 } else if chars.contains(&part)? { 0.5 } else { 0.0 };
            continue;
        }
        let mut hits = Vec::with_capacity(letters.len());
        for window in letters.windows(2) {
            pair.clear();
            pair.extend(window);
            hits.push(found.contains(PyString::new(py, &pair))?);
        }
        for (i, letter) in letters.iter().enumerate() {
            if (i > 0 && hits[i - 1]) || (i < hits.len() && hits[i]) {
                covered += 1.0;
            } else if chars.contains(PyString::new(py, letter.encode_utf8(&mut [0; 4])))? {
                covered += 0.5;
            }
        }
    }
    Ok(covered)
}

/// English words stemmed by Snowball (snowstem: the Snowball project's algorithm, as PyStemmer's C build).
#[pyfunction]
pub fn stem_words(words: Vec<String>) -> PyResult<Vec<String>> {
    let stemmer = snowstem::Stemmer::create(snowstem::Algorithm::English);
    guarded(|| words.iter().map(|word| stemmer.stem(word).to_string()).collect())
}
