//! ragpulse._native: the compiled core behind ragpulse's Python API (README "Packaging").
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyFrozenSet, PyList, PyString, PyTuple};
use pyo3::IntoPyObject;
use std::collections::{HashMap, HashSet};

mod align;
mod clause;
mod lexical;
mod metrics;
mod otlp;
mod otlp_json;

/// Requests from this size on are parsed with the GIL released, so the event loop keeps serving meanwhile.
const DETACH_FROM_BYTES: usize = 64 * 1024;

fn value_to_py<'py>(py: Python<'py>, value: &otlp::Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        otlp::Value::Str(text) => PyString::new(py, text).into_any(),
        otlp::Value::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any(),
        otlp::Value::Int(number) => number.into_pyobject(py)?.into_any(),
        otlp::Value::Double(number) => PyFloat::new(py, *number).into_any(),
        otlp::Value::Bytes(bytes) => PyBytes::new(py, bytes).into_any(),
        otlp::Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(value_to_py(py, item)?)?;
            }
            list.into_any()
        }
        otlp::Value::KvList(pairs) => attributes_to_py(py, pairs)?.into_any(),
        otlp::Value::Empty => py.None().into_bound(py),
    })
}

fn attributes_to_py<'py>(py: Python<'py>, pairs: &otlp::Attributes) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (key, value) in pairs {
        dict.set_item(*key, value_to_py(py, value)?)?; // a key given twice: the last wins, as in the Python decoding
    }
    Ok(dict)
}

/// The span attribute keys the mapping reads (sources/otlp/keys.py): exact keys and key prefixes. The others
/// are still read and checked like the protobuf runtime checks them, but never become Python objects.
#[pyclass(frozen, module = "ragpulse._native")]
struct KeyFilter {
    exact: HashSet<String>,
    prefixes: Vec<String>,
}

#[pymethods]
impl KeyFilter {
    #[new]
    fn new(exact: HashSet<String>, prefixes: Vec<String>) -> Self {
        KeyFilter { exact, prefixes }
    }

    fn keeps(&self, key: &str) -> bool {
        self.exact.contains(key) || self.prefixes.iter().any(|prefix| key.starts_with(prefix.as_str()))
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes.iter().flat_map(|b| [DIGITS[usize::from(b >> 4)] as char, DIGITS[usize::from(b & 15)] as char]).collect()
}

/// An id the span records carry: `size` bytes, not all zero.
fn valid_id(bytes: &[u8], size: usize) -> bool {
    bytes.len() == size && bytes.iter().any(|b| *b != 0)
}

/// An OTLP ExportTraceServiceRequest (protobuf bytes) as (spans, rejected). Each span is made by calling
/// `span_type(trace_id, span_id, parent_span_id, name, start, end, attributes, resource, events, size, scope, kind)`
/// (ids in hex, the parent None unless 8 non-zero bytes; the resource's attributes one dict per resource; each
/// event `event_type(name, time, attributes)`); span attributes only those `keys` keeps (all without it). A span
/// without a 16-byte trace id or an 8-byte span id (or all zero) is not made: (its name, "trace_id" or "span_id")
/// is in `rejected`. Raises ValueError with the reason on a malformed request.
#[pyfunction]
#[pyo3(signature = (body, keys, span_type, event_type))]
fn decode_otlp_traces<'py>(
    py: Python<'py>, body: &Bound<'py, PyBytes>, keys: Option<Bound<'py, KeyFilter>>, span_type: &Bound<'py, PyAny>,
    event_type: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>)> {
    records(py, body.as_bytes(), keys, span_type, event_type)
}

/// An OTLP/JSON request as decode_otlp_traces reads its protobuf form (native/src/otlp_json.rs); None when it is
/// outside the subset read here: the caller takes the general path, which reads or refuses it.
#[pyfunction]
#[pyo3(signature = (body, keys, span_type, event_type))]
fn decode_otlp_json<'py>(
    py: Python<'py>, body: &Bound<'py, PyBytes>, keys: Option<Bound<'py, KeyFilter>>, span_type: &Bound<'py, PyAny>,
    event_type: &Bound<'py, PyAny>,
) -> PyResult<Option<(Bound<'py, PyList>, Bound<'py, PyList>)>> {
    let bytes = body.as_bytes();
    let transcode = move || std::panic::catch_unwind(|| otlp_json::transcode(bytes));
    let transcoded = if bytes.len() >= DETACH_FROM_BYTES { py.detach(transcode) } else { transcode() };
    match transcoded {
        Ok(Some(protobuf)) => records(py, &protobuf, keys, span_type, event_type).map(Some),
        Ok(None) => Ok(None),
        Err(_) => Err(PyValueError::new_err("the native OTLP/JSON reader failed (a defect: please report it)")),
    }
}

fn records<'py>(
    py: Python<'py>, bytes: &[u8], keys: Option<Bound<'py, KeyFilter>>, span_type: &Bound<'py, PyAny>,
    event_type: &Bound<'py, PyAny>,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>)> {
    let filter: Option<&KeyFilter> = keys.as_ref().map(|keys| keys.get());
    let keep = move |key: &str| filter.is_none_or(|filter| filter.keeps(key));
    let parse = move || std::panic::catch_unwind(|| otlp::decode(bytes, &keep));
    let parsed = if bytes.len() >= DETACH_FROM_BYTES { py.detach(parse) } else { parse() };
    let request = match parsed {
        Ok(Ok(request)) => request,
        Ok(Err(otlp::DecodeError(reason))) => return Err(PyValueError::new_err(reason)),
        Err(_) => return Err(PyValueError::new_err("the native OTLP decoder failed (a defect: please report it)")),
    };
    let resources: Vec<Bound<'py, PyDict>> =
        request.resources.iter().map(|attributes| attributes_to_py(py, attributes)).collect::<PyResult<_>>()?;
    let (spans, rejected) = (PyList::empty(py), PyList::empty(py));
    for span in &request.spans {
        if !valid_id(span.trace_id, 16) || !valid_id(span.span_id, 8) {
            rejected.append((span.name, if valid_id(span.trace_id, 16) { "span_id" } else { "trace_id" }))?;
            continue;
        }
        let events = PyList::empty(py);
        for event in &span.events {
            events.append(event_type.call1((event.name, event.time_unix_nano, attributes_to_py(py, &event.attributes)?))?)?;
        }
        let parent = valid_id(span.parent_span_id, 8).then(|| hex(span.parent_span_id));
        spans.append(span_type.call1((
            hex(span.trace_id), hex(span.span_id), parent, span.name, span.start_unix_nano, span.end_unix_nano,
            attributes_to_py(py, &span.attributes)?, &resources[span.resource], events, span.size, span.scope,
            span.kind,
        ))?)?;
    }
    Ok((spans, rejected))
}

/// (groundedness, answer relevancy, context relevance, number mismatch): scorers/lexical.py's LexicalScores.
type LexicalScoresTuple = (Option<f64>, Option<f64>, Option<f64>, bool);

/// The lexical scorer's text units (scorers/lexical.py), built once from its word tables.
#[pyclass(frozen, module = "ragpulse._native")]
struct LexicalAnalyser {
    tables: lexical::Tables,
}

#[pymethods]
impl LexicalAnalyser {
    #[new]
    fn new(
        units: Vec<(String, String)>, number_words: HashMap<String, String>, stopwords: HashSet<String>,
        cjk_digits: HashMap<char, u64>, cjk_units: Vec<String>,
    ) -> Self {
        let chars = |text: &str| text.chars().collect::<Vec<char>>();
        let units = units.into_iter().map(|(spelling, unit)| (chars(&spelling), unit)).collect();
        let cjk_units = cjk_units.iter().map(|unit| chars(unit)).collect();
        let number_words = number_words.iter().map(|(word, digits)| (chars(word), chars(digits))).collect();
        let stopwords = stopwords.iter().map(|word| chars(word)).collect();
        let cjk_digits = cjk_digits.into_iter().collect();
        LexicalAnalyser { tables: lexical::Tables { units, number_words, stopwords, cjk_digits, cjk_units } }
    }

    fn units(&self, text: &Bound<'_, PyString>) -> PyResult<LexicalUnits> {
        with_text(text, |text| Ok(LexicalUnits { units: guarded(|| lexical::units(text, &self.tables))? }))
    }

    /// The answer's units against its question's and its chunks' (groundedness, answer relevancy, context
    /// relevance, number mismatch); the answer's units never become Python objects.
    fn score(
        &self, answer: &Bound<'_, PyString>, question: &LexicalUnits, chunks: Vec<PyRef<'_, LexicalUnits>>,
    ) -> PyResult<LexicalScoresTuple> {
        let chunks: Vec<&lexical::Units> = chunks.iter().map(|chunk| &chunk.units).collect();
        let answer = with_text(answer, |answer| guarded(|| lexical::units(answer, &self.tables)))?;
        let s = guarded(|| lexical::score(&answer, &question.units, &chunks))?;
        Ok((s.groundedness, s.answer_relevancy, s.context_relevance, s.number_mismatch))
    }
}

/// One text's lexical units, kept in the crate so that scoring reads them there: words (content words and CJK
/// bigrams), numbers as (value, unit) and the numbers' values, each a frozenset when read from Python.
#[pyclass(frozen, module = "ragpulse._native")]
struct LexicalUnits {
    units: lexical::Units,
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

/// The local judge's text analysis (scorers/text.py), built once from its translated patterns and word tables.
#[pyclass(frozen, module = "ragpulse._native")]
struct TextAnalyser {
    analyser: clause::Analyser,
}

fn table<'py, T: for<'a> FromPyObject<'a, 'py>>(tables: &Bound<'py, PyDict>, name: &str) -> PyResult<T> {
    match tables.get_item(name)? {
        Some(value) => value.extract::<T>().map_err(|_| PyValueError::new_err(format!("table {name}: not of its type"))),
        None => Err(PyValueError::new_err(format!("table {name} missing"))),
    }
}

/// A str's text, read without leaving a UTF-8 copy on it: CPython keeps the UTF-8 that a read as &str makes on every
/// non-ASCII str for as long as the str lives, and the texts read here are held on (queues, the join, the caches: a
/// Chinese chunk 5 bytes a character instead of 2, and not what their byte caps count). ASCII is read in place (its
/// UTF-8 is its own data); the rest is encoded into a bytes object of its own, dropped after the call.
fn with_text<T>(text: &Bound<'_, PyString>, read: impl FnOnce(&str) -> PyResult<T>) -> PyResult<T> {
    // SAFETY: `text` is a live str, held by its Bound; the macro reads its state flags.
    if unsafe { pyo3::ffi::PyUnicode_IS_ASCII(text.as_ptr()) } != 0 {
        return read(text.to_str()?);
    }
    let encoded = text.encode_utf8()?; // a lone surrogate raises UnicodeEncodeError, as to_str() did
    // SAFETY: CPython's strict UTF-8 encoder made these bytes: valid UTF-8 (checking again cost 3% of a Chinese
    // answer's scoring).
    read(unsafe { std::str::from_utf8_unchecked(encoded.as_bytes()) })
}

fn guarded<T>(work: impl FnOnce() -> T) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
        .map_err(|_| PyValueError::new_err("the native text analysis failed (a defect: please report it)"))
}

#[pymethods]
impl TextAnalyser {
    #[new]
    fn new(patterns: &Bound<'_, PyDict>, tables: &Bound<'_, PyDict>) -> PyResult<Self> {
        let pattern = |name: &str| -> PyResult<fancy_regex::Regex> {
            let source: String = table(patterns, name)?;
            fancy_regex::Regex::new(&source).map_err(|err| PyValueError::new_err(format!("pattern {name}: {err}")))
        };
        let patterns = clause::Patterns {
            leading_answer: pattern("leading_answer")?, en_not_negations: pattern("en_not_negations")?,
            cjk_leading_answer: pattern("cjk_leading_answer")?, en_quantity: pattern("en_quantity")?,
            quantity_start: pattern("quantity_start")?, name: pattern("name")?, list_item: pattern("list_item")?,
            latin_in_cjk: pattern("latin_in_cjk")?, cjk_function_or_negator: pattern("cjk_function_or_negator")?,
            cjk_quantity: pattern("cjk_quantity")?, latin_word: pattern("latin_word")?,
            polarity_token: pattern("polarity_token")?, any_negator: pattern("any_negator")?,
            question_word: pattern("question_word")?, cjk_next: pattern("cjk_next")?, cjk_week: pattern("cjk_week")?,
        };
        let tables = clause::Tables {
            stopwords: table(tables, "stopwords")?, chatter: table(tables, "chatter")?,
            cjk_function: table(tables, "cjk_function")?, cjk_negators: table(tables, "cjk_negators")?,
            not_negations: table(tables, "not_negations")?, en_negators: table(tables, "en_negators")?,
            quantity_words: table(tables, "quantity_words")?, quantity_words_first: table(tables, "quantity_words_first")?,
            en_units: table(tables, "en_units")?, currency_sign: table(tables, "currency_sign")?,
            number_words: table(tables, "number_words")?, scales: table(tables, "scales")?,
            minutes: table(tables, "minutes")?, rate_minutes: table(tables, "rate_minutes")?, half: table(tables, "half")?,
            cjk_units: table(tables, "cjk_units")?, cjk_digits: table(tables, "cjk_digits")?,
            not_counts: table(tables, "not_counts")?, scope_ends: table(tables, "scope_ends")?,
            scope: table(tables, "scope")?, question_stopwords: table(tables, "question_stopwords")?,
        };
        Ok(TextAnalyser { analyser: clause::Analyser::new(patterns, tables) })
    }

    /// The stemmed content words of lower-cased text.
    fn words(&self, lower: &Bound<'_, PyString>) -> PyResult<Vec<String>> {
        with_text(lower, |lower| guarded(|| self.analyser.words(lower)))
    }

    fn question_terms<'py>(&self, py: Python<'py>, text: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyFrozenSet>> {
        PyFrozenSet::new(py, &with_text(text, |text| guarded(|| self.analyser.question_terms(text)))?)
    }

    /// A clause's analysis: (terms, words, cjk_parts, chars, sequence, quantities, names, negated, governed,
    /// spelled), the fields of scorers/text.py's Clause after its text.
    fn clause<'py>(&self, py: Python<'py>, text: &Bound<'py, PyString>) -> PyResult<Bound<'py, PyTuple>> {
        // the frozensets drop repeated quantities, as Python's did
        let c = with_text(text, |text| guarded(|| self.analyser.clause(text)))?;
        let items: [Bound<'py, PyAny>; 10] = [
            PyFrozenSet::new(py, &c.terms)?.into_any(), PyFrozenSet::new(py, &c.words)?.into_any(),
            PyTuple::new(py, &c.parts)?.into_any(), PyFrozenSet::new(py, &c.chars)?.into_any(),
            PyTuple::new(py, &c.sequence)?.into_any(), PyFrozenSet::new(py, &c.quantities)?.into_any(),
            PyFrozenSet::new(py, &c.names)?.into_any(), PyBool::new(py, c.negated).to_owned().into_any(),
            PyFrozenSet::new(py, &c.governed)?.into_any(), PyFrozenSet::new(py, &c.spelled)?.into_any(),
        ];
        PyTuple::new(py, items)
    }
}

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
struct PyClauseIndex {
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
fn align_claim(
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

/// Every match of a pattern in each text, as (start, end) in characters, as Python's finditer gives them: what
/// tests/test_crate_regex.py holds scorers/crate_regex.py's translations of the Python patterns to.
#[pyfunction]
fn regex_spans(pattern: &str, texts: Vec<String>) -> PyResult<Vec<Vec<(usize, usize)>>> {
    let regex = fancy_regex::Regex::new(pattern).map_err(|err| PyValueError::new_err(format!("pattern: {err}")))?;
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
fn cjk_covered(parts: &Bound<'_, PyTuple>, found: &Bound<'_, PyFrozenSet>, chars: &Bound<'_, PyFrozenSet>) -> PyResult<f64> {
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
fn stem_words(words: Vec<String>) -> PyResult<Vec<String>> {
    let stemmer = snowstem::Stemmer::create(snowstem::Algorithm::English);
    guarded(|| words.iter().map(|word| stemmer.stem(word).to_string()).collect())
}

#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(decode_otlp_traces, module)?)?;
    module.add_function(wrap_pyfunction!(decode_otlp_json, module)?)?;
    module.add_function(wrap_pyfunction!(stem_words, module)?)?;
    module.add_function(wrap_pyfunction!(align_claim, module)?)?;
    module.add_function(wrap_pyfunction!(regex_spans, module)?)?;
    module.add_function(wrap_pyfunction!(cjk_covered, module)?)?;
    module.add_class::<PyClauseIndex>()?;
    module.add_class::<LexicalAnalyser>()?;
    module.add_class::<LexicalUnits>()?;
    module.add_class::<metrics::FastCounter>()?;
    module.add_class::<metrics::FastHistogram>()?;
    module.add_class::<KeyFilter>()?;
    module.add_class::<TextAnalyser>()?;
    Ok(())
}
