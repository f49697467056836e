//! The OTLP decoders' bindings (sources/otlp/spans.py): a request, protobuf or OTLP/JSON, as the span records the
//! Python types given make, with only the span attribute keys kept that the mapping reads.
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyList, PyString, PyTuple};
use pyo3::{intern, IntoPyObject};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;

use super::roles::RoleRules;
use super::texts::{TextCache, MIN_BYTES};
use crate::{otlp, otlp_json};

/// Requests from this size on are parsed with the GIL released, so the event loop keeps serving meanwhile.
const DETACH_FROM_BYTES: usize = 64 * 1024;

/// The Python strings of a request's attribute keys and string values, document field names, span and scope names and
/// ids (in hex), each made once: its spans repeat the same few dozen keys and names, a trace's spans its trace id, a
/// child its parent's span id, a trace's spans its question and answer (five and three times in LlamaIndex's), its
/// traces the chunks a knowledge base recurs with. Held only while the request's records are made (its size bounds it).
struct Names<'r, 'py> {
    py: Python<'py>,
    made: FxHashMap<&'r str, Bound<'py, PyString>>,
    ids: FxHashMap<&'r [u8], Bound<'py, PyString>>,
    texts: Option<Bound<'py, TextCache>>, // documents' texts across requests (native/src/otlp/texts.rs)
}

impl<'r, 'py> Names<'r, 'py> {
    /// `spans`: the request's, a span's id and its trace's, and a few texts a span: sized for them from the start,
    /// not grown (rehashed) several times a request.
    fn new(py: Python<'py>, texts: Option<Bound<'py, TextCache>>, spans: usize) -> Self {
        let made = FxHashMap::with_capacity_and_hasher(spans, Default::default());
        Names { py, made, ids: FxHashMap::with_capacity_and_hasher(spans + spans / 4, Default::default()), texts }
    }

    /// A document field's value: its text from the cache of recurring ones, when there is one.
    fn document_value(&mut self, value: &'r otlp::Value) -> PyResult<Bound<'py, PyAny>> {
        match (value, &self.texts) {
            (otlp::Value::Str(text), Some(texts)) if text.len() >= MIN_BYTES => Ok(texts.get().get(self.py, text).into_any()),
            _ => value_to_py(self, value),
        }
    }

    fn get(&mut self, name: &'r str) -> Bound<'py, PyString> {
        let py = self.py;
        self.made.entry(name).or_insert_with(|| PyString::new(py, name)).clone()
    }

    fn id(&mut self, bytes: &'r [u8]) -> Bound<'py, PyString> {
        let py = self.py;
        self.ids.entry(bytes).or_insert_with(|| PyString::new(py, &hex(bytes))).clone()
    }
}

fn value_to_py<'r, 'py>(names: &mut Names<'r, 'py>, value: &'r otlp::Value) -> PyResult<Bound<'py, PyAny>> {
    let py = names.py;
    Ok(match value {
        otlp::Value::Str(text) => names.get(text).into_any(),
        otlp::Value::Bool(flag) => PyBool::new(py, *flag).to_owned().into_any(),
        otlp::Value::Int(number) => number.into_pyobject(py)?.into_any(),
        otlp::Value::Double(number) => PyFloat::new(py, *number).into_any(),
        otlp::Value::Bytes(bytes) => PyBytes::new(py, bytes).into_any(),
        otlp::Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(value_to_py(names, item)?)?;
            }
            list.into_any()
        }
        otlp::Value::KvList(pairs) => attributes_to_py(names, pairs)?.into_any(),
        otlp::Value::Empty => py.None().into_bound(py),
    })
}

fn attributes_to_py<'r, 'py>(names: &mut Names<'r, 'py>, pairs: &'r otlp::Attributes) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(names.py);
    for (key, value) in pairs {
        // a key given twice: the last wins, as in the Python decoding
        dict.set_item(names.get(key), value_to_py(names, value)?)?;
    }
    Ok(dict)
}

/// The span attribute keys the mapping reads (sources/otlp/keys.py): exact keys and key prefixes. The others
/// are still read and checked like the protobuf runtime checks them, but never become Python objects. `documents`:
/// the families of flat document keys (`{family}.{i}.document.{field}`, OpenInference's `retrieval.documents`) a
/// span's records gather into one structure (see `gathered`).
#[pyclass(frozen, module = "ragpulse._native")]
pub struct KeyFilter {
    exact: FxHashSet<String>, // every span attribute's key is looked up: Fx, not SipHash
    prefixes: Vec<String>,
    documents: Vec<String>,
    /// Whether an exact key is a document key (the route attribute may be one): only then is each document key
    /// looked up among them.
    exact_documents: bool,
    /// The mapping's rules of what a span is: with them, each span is made with its roles (a 13th argument).
    roles: Option<Py<RoleRules>>,
    /// The type a family's plain documents are made as (collector/events.py's Chunk; see `plain`), when given.
    chunk: Option<Py<PyAny>>,
}

#[pymethods]
impl KeyFilter {
    #[new]
    #[pyo3(signature = (exact, prefixes, documents = None, roles = None, chunk = None))]
    fn new(
        exact: FxHashSet<String>, prefixes: Vec<String>, documents: Option<Vec<String>>, roles: Option<Py<RoleRules>>,
        chunk: Option<Py<PyAny>>,
    ) -> Self {
        let documents = documents.unwrap_or_default();
        let exact_documents = exact.iter().any(|key| !matches!(document_key(key, &documents), DocumentKey::Other));
        KeyFilter { exact, prefixes, documents, exact_documents, roles, chunk }
    }

    fn keeps(&self, key: &str) -> bool {
        keeps(&self.exact, &self.prefixes, key)
    }
}

fn keeps(exact: &FxHashSet<String>, prefixes: &[String], key: &str) -> bool {
    exact.contains(key) || prefixes.iter().any(|prefix| key.starts_with(prefix.as_str()))
}

/// What a span attribute key is to the document families: `Other` (no family's `{family}.`), `Document` (family,
/// index, field) in the one spelling gathered (the index 1-9 ASCII digits, no leading zero but "0"; the field ASCII
/// letters, digits and `_`), or `Unusual`: any other key of a family, which the Python reading matches its own way
/// (Unicode digits and word characters, "007" for 7, a trailing newline), so its span is not gathered.
enum DocumentKey<'k> {
    Other,
    Document(usize, u32, &'k str),
    Unusual,
}

fn document_key<'k>(key: &'k str, families: &[String]) -> DocumentKey<'k> {
    let Some((family, rest)) = families.iter().enumerate().find_map(|(number, family)| {
        key.strip_prefix(family.as_str()).and_then(|rest| rest.strip_prefix('.')).map(|rest| (number, rest))
    }) else {
        return DocumentKey::Other;
    };
    // At the first dot: a canonical index has none, so a `.document.` further on is no document key either (and a
    // substring search a key, which split_once would make, is not needed).
    let Some((index, after)) = rest.split_once('.') else { return DocumentKey::Unusual };
    let Some(field) = after.strip_prefix("document.") else { return DocumentKey::Unusual };
    let canonical = (1..=9).contains(&index.len()) && index.bytes().all(|b| b.is_ascii_digit())
        && (index == "0" || !index.starts_with('0'));
    let word = !field.is_empty() && field.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    match (canonical, word, index.parse::<u32>()) {
        (true, true, Ok(number)) => DocumentKey::Document(family, number, field),
        _ => DocumentKey::Unusual,
    }
}

/// A span's kept attributes and, when its filter names document families and every key of those families is in the
/// gathered spelling (and none is an exact key: the route attribute), its documents gathered:
/// {family: [{field: value}, ...] by index}, those keys left out of the attributes. Else (None, every key as it came).
fn gathered<'r, 'py>(
    names: &mut Names<'r, 'py>, pairs: &'r otlp::Attributes, filter: Option<&KeyFilter>,
) -> PyResult<(Bound<'py, PyDict>, Option<Bound<'py, PyDict>>)> {
    let py = names.py;
    let families = filter.map_or(&[][..], |filter| filter.documents.as_slice());
    let keys: Vec<DocumentKey> = pairs.iter().map(|(key, _)| document_key(key, families)).collect();
    let unusual = keys.iter().zip(pairs).any(|(kind, (key, _))| match kind {
        DocumentKey::Other => false,
        DocumentKey::Unusual => true,
        DocumentKey::Document(..) => {
            filter.is_some_and(|filter| filter.exact_documents && filter.exact.contains(key.as_ref()))
        }
    });
    if unusual || !keys.iter().any(|kind| matches!(kind, DocumentKey::Document(..))) {
        return Ok((attributes_to_py(names, pairs)?, None));
    }
    let attributes = PyDict::new(py);
    let mut documents: Vec<BTreeMap<u32, Fields<'r>>> = families.iter().map(|_| BTreeMap::new()).collect();
    for (kind, (key, value)) in keys.iter().zip(pairs) {
        match kind {
            DocumentKey::Document(family, index, field) => {
                let fields = documents[*family].entry(*index).or_default();
                // a key given twice: the last value wins, in the first one's place, as in a dict
                match fields.iter_mut().find(|(name, _)| name == field) {
                    Some(slot) => slot.1 = value,
                    None => fields.push((field, value)),
                }
            }
            _ => attributes.set_item(names.get(key), value_to_py(names, value)?)?,
        }
    }
    let chunk = filter.and_then(|filter| filter.chunk.as_ref()).map(|chunk| chunk.bind(py));
    let keywords = PyTuple::new(py, [intern!(py, "text"), intern!(py, "id"), intern!(py, "score")])?;
    let by_family = PyDict::new(py);
    for (family, found) in families.iter().zip(documents) {
        if found.is_empty() {
            continue;
        }
        let list = match chunk {
            Some(chunk) if found.values().all(|fields| plain(fields)) => {
                let made = found.values().map(|fields| made_chunk(names, chunk, &keywords, fields)).collect::<PyResult<Vec<_>>>()?;
                PyList::new(py, made)?
            }
            _ => {
                let made = found.values().map(|fields| {
                    let document = PyDict::new(py);
                    for (field, value) in fields {
                        document.set_item(names.get(field), names.document_value(value)?)?;
                    }
                    Ok(document)
                });
                PyList::new(py, made.collect::<PyResult<Vec<_>>>()?)?
            }
        };
        by_family.set_item(family, list)?;
    }
    Ok((attributes, Some(by_family)))
}

/// A gathered document's fields, (name, value) in the order first given.
type Fields<'r> = Vec<(&'r str, &'r otlp::Value<'r>)>;

/// Whether a document's chunk is made here: its content text, its id text or an integer, its score a number, each
/// or absent, and no metadata (its source is read from JSON by sources/otlp/documents.py). These are the values
/// whose conversions (`text_value`, `float_value`) are exact to make here; a family with any other document is
/// handed over as fields, for the Python reading. Other fields no rule reads.
fn plain(fields: &Fields) -> bool {
    fields.iter().all(|(name, value)| match *name {
        "content" => matches!(value, otlp::Value::Str(_) | otlp::Value::Empty),
        "id" => matches!(value, otlp::Value::Str(_) | otlp::Value::Int(_) | otlp::Value::Empty),
        "score" => matches!(value, otlp::Value::Double(_) | otlp::Value::Int(_) | otlp::Value::Empty),
        "metadata" => matches!(value, otlp::Value::Empty),
        _ => true,
    })
}

/// A plain document's chunk: chunk(text=, id=, score=) as documents.py's reading makes it (an integer id as its
/// decimal text, an integer score as the nearest double, as Python's str() and float() give them; None when absent,
/// the chunk's default). `keywords`: the tuple ("text", "id", "score"), the call's keyword names (no dict a chunk).
fn made_chunk<'r, 'py>(
    names: &mut Names<'r, 'py>, chunk: &Bound<'py, PyAny>, keywords: &Bound<'py, PyTuple>, fields: &Fields<'r>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = names.py;
    let mut values: [Bound<'py, PyAny>; 3] = [py.None().into_bound(py), py.None().into_bound(py), py.None().into_bound(py)];
    for (name, value) in fields {
        let slot = match *name {
            "content" => 0,
            "id" => 1,
            "score" => 2,
            _ => continue,
        };
        values[slot] = match value {
            otlp::Value::Str(_) => names.document_value(value)?,
            otlp::Value::Int(number) if slot == 1 => PyString::new(py, &number.to_string()).into_any(),
            // i64 to f64 rounds to the nearest, ties to even, as float(int) does
            otlp::Value::Int(number) => PyFloat::new(py, *number as f64).into_any(),
            otlp::Value::Double(number) => PyFloat::new(py, *number).into_any(),
            _ => continue, // an empty value: None
        };
    }
    let arguments = values.each_ref().map(Bound::as_ptr);
    // SAFETY: three borrowed arguments, alive in `values` for the call, named by the three strings of `keywords`;
    // the result is a new reference or NULL with an exception set.
    unsafe {
        let made = pyo3::ffi::PyObject_Vectorcall(chunk.as_ptr(), arguments.as_ptr(), 0, keywords.as_ptr());
        Bound::from_owned_ptr_or_err(py, made)
    }
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(2 * bytes.len());
    for b in bytes {
        text.push(DIGITS[usize::from(b >> 4)] as char);
        text.push(DIGITS[usize::from(b & 15)] as char);
    }
    text
}

/// An id the span records carry: `size` bytes, not all zero.
fn valid_id(bytes: &[u8], size: usize) -> bool {
    bytes.len() == size && bytes.iter().any(|b| *b != 0)
}

/// An OTLP ExportTraceServiceRequest (protobuf bytes) as (spans, rejected). Each span is made by calling
/// `span_type(trace_id, span_id, parent_span_id, name, start, end, attributes, resource, events, size, scope, kind)`,
/// with `status_code=` and `status_message=` when the span has a status
/// (ids in hex, the parent None unless 8 non-zero bytes; the resource's attributes one dict per resource; each
/// event `event_type(name, time, attributes)`, in a list, or the empty tuple for none); span attributes only those
/// `keys` keeps (all without it). A span without a 16-byte trace id or an 8-byte span id (or all zero), or with a
/// string that is not valid UTF-8 in it or in its resource or scope, is not made: (its name, the reason, what is
/// wrong) is in `rejected`, the reason "invalid_trace_id", "invalid_span_id" or "invalid_utf8". Raises ValueError
/// with the reason on a malformed request (truncated, nested past 100 levels). With `texts`, a retrieved document's
/// text of MIN_BYTES or more is the cache's string (the same for every request it recurs in while held).
#[pyfunction]
#[pyo3(signature = (body, keys, span_type, event_type, texts = None))]
pub fn decode_otlp_traces<'py>(
    py: Python<'py>, body: &Bound<'py, PyBytes>, keys: Option<Bound<'py, KeyFilter>>, span_type: &Bound<'py, PyAny>,
    event_type: &Bound<'py, PyAny>, texts: Option<Bound<'py, TextCache>>,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>)> {
    records(py, body.as_bytes(), keys, span_type, event_type, texts)
}

/// An OTLP/JSON request as decode_otlp_traces reads its protobuf form (native/src/otlp_json.rs); None when it is
/// outside the subset read here: the caller takes the general path, which reads or refuses it.
#[pyfunction]
#[pyo3(signature = (body, keys, span_type, event_type, texts = None))]
pub fn decode_otlp_json<'py>(
    py: Python<'py>, body: &Bound<'py, PyBytes>, keys: Option<Bound<'py, KeyFilter>>, span_type: &Bound<'py, PyAny>,
    event_type: &Bound<'py, PyAny>, texts: Option<Bound<'py, TextCache>>,
) -> PyResult<Option<(Bound<'py, PyList>, Bound<'py, PyList>)>> {
    let bytes = body.as_bytes();
    let transcode = move || std::panic::catch_unwind(|| otlp_json::transcode(bytes));
    let transcoded = if bytes.len() >= DETACH_FROM_BYTES { py.detach(transcode) } else { transcode() };
    match transcoded {
        Ok(Some(protobuf)) => records(py, &protobuf, keys, span_type, event_type, texts).map(Some),
        Ok(None) => Ok(None),
        Err(_) => Err(PyValueError::new_err("the native OTLP/JSON reader failed (a defect: please report it)")),
    }
}

fn records<'py>(
    py: Python<'py>, bytes: &[u8], keys: Option<Bound<'py, KeyFilter>>, span_type: &Bound<'py, PyAny>,
    event_type: &Bound<'py, PyAny>, texts: Option<Bound<'py, TextCache>>,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>)> {
    let filter: Option<&KeyFilter> = keys.as_ref().map(|keys| keys.get());
    let rules: Option<&RoleRules> = filter.and_then(|filter| filter.roles.as_ref()).map(|rules| rules.get());
    // Only the key sets cross into the parse (the chunk type, a Python object, is not unwind safe).
    let kept = filter.map(|filter| (&filter.exact, &filter.prefixes));
    let keep = move |key: &str| kept.is_none_or(|(exact, prefixes)| keeps(exact, prefixes, key));
    let parse = move || std::panic::catch_unwind(|| otlp::decode(bytes, &keep));
    let parsed = if bytes.len() >= DETACH_FROM_BYTES { py.detach(parse) } else { parse() };
    let request = match parsed {
        Ok(Ok(request)) => request,
        Ok(Err(otlp::DecodeError(reason))) => return Err(PyValueError::new_err(reason)),
        Err(_) => return Err(PyValueError::new_err("the native OTLP decoder failed (a defect: please report it)")),
    };
    let mut names = Names::new(py, texts, request.spans.len());
    // A resource with invalid UTF-8 makes no dict: none of its spans is made.
    let resources: Vec<Option<Bound<'py, PyDict>>> = request.resources.iter()
        .map(|resource| {
            resource.invalid.is_none().then(|| attributes_to_py(&mut names, &resource.attributes)).transpose()
        })
        .collect::<PyResult<_>>()?;
    let (spans, rejected) = (PyList::empty(py), PyList::empty(py));
    for span in &request.spans {
        if let Some((reason, problem)) = rejection(span, &request.resources[span.resource]) {
            rejected.append((span.name.as_ref(), reason, problem))?;
            continue;
        }
        // Most spans have no events: the empty tuple for them, not a list each (72 bytes a span while it waits).
        let events = if span.events.is_empty() {
            PyTuple::empty(py).into_any()
        } else {
            let events = PyList::empty(py);
            for event in &span.events {
                let attributes = attributes_to_py(&mut names, &event.attributes)?;
                events.append(event_type.call1((event.name.as_ref(), event.time_unix_nano, attributes))?)?;
            }
            events.into_any()
        };
        let parent = valid_id(span.parent_span_id, 8).then(|| names.id(span.parent_span_id));
        let (attributes, documents) = gathered(&mut names, &span.attributes, filter)?;
        let mut args: Vec<Bound<'py, PyAny>> = vec![
            names.id(span.trace_id).into_any(), names.id(span.span_id).into_any(), parent.into_pyobject(py)?,
            names.get(&span.name).into_any(), span.start_unix_nano.into_pyobject(py)?.into_any(),
            span.end_unix_nano.into_pyobject(py)?.into_any(), attributes.into_any(),
            (&resources[span.resource]).into_pyobject(py)?.into_any(), events, span.size.into_pyobject(py)?.into_any(),
            names.get(&span.scope).into_any(), span.kind.into_pyobject(py)?.into_any(),
        ];
        if let Some(rules) = rules {
            args.push(rules.roles(span).into_pyobject(py)?.into_any());
        }
        let args = PyTuple::new(py, args)?;
        // The status and the documents by keyword, and only when there are: most spans have neither, and a dict a
        // span would cost each of them.
        if span.status_code == 0 && span.status_message.is_empty() && documents.is_none() {
            spans.append(span_type.call1(args)?)?;
        } else {
            let keywords = PyDict::new(py);
            if span.status_code != 0 || !span.status_message.is_empty() {
                keywords.set_item("status_code", span.status_code)?;
                keywords.set_item("status_message", span.status_message.as_ref())?;
            }
            if let Some(documents) = documents {
                keywords.set_item("documents", documents)?;
            }
            spans.append(span_type.call(args, Some(&keywords))?)?;
        }
    }
    Ok((spans, rejected))
}

/// Why a span is not made, (reason, what is wrong), if it is not: its ids first, then invalid UTF-8 in its
/// resource, its scope or itself.
fn rejection(span: &otlp::SpanRecord, resource: &otlp::Resource) -> Option<(&'static str, String)> {
    if !valid_id(span.trace_id, 16) {
        return Some(("invalid_trace_id", "trace_id must be 16 non-zero bytes".into()));
    }
    if !valid_id(span.span_id, 8) {
        return Some(("invalid_span_id", "span_id must be 8 non-zero bytes".into()));
    }
    let invalid = resource.invalid.as_ref().or(span.invalid.as_ref())?;
    Some(("invalid_utf8", format!("{invalid} is not valid UTF-8")))
}
