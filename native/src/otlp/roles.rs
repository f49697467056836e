//! What a span is to the mapping, answered while its record is made (sources/otlp/roles.py's span_roles, whose
//! tables these are): bits by its OpenInference kind, its GenAI operation, the AI SDK operation it names (or its
//! name) and its events' names. A span holding a key the Python rules read beyond these (`undecided`), or one of
//! those three keys with a value that is neither text nor absent nor a structure, is left to them (-1).
use pyo3::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::otlp::{SpanRecord, Value};

#[pyclass(frozen, module = "ragpulse._native")]
pub struct RoleRules {
    kind_key: String,
    operation_key: String,
    call_key: String,
    kinds: FxHashMap<String, u8>,
    operations: FxHashMap<String, u8>,
    calls: FxHashMap<String, u8>,
    events: FxHashMap<String, u8>,
    undecided: FxHashSet<String>,
}

#[pymethods]
impl RoleRules {
    #[new]
    #[pyo3(signature = (keys, kinds, operations, calls, events, undecided))]
    fn new(
        keys: (String, String, String), kinds: FxHashMap<String, u8>, operations: FxHashMap<String, u8>,
        calls: FxHashMap<String, u8>, events: FxHashMap<String, u8>, undecided: FxHashSet<String>,
    ) -> Self {
        let (kind_key, operation_key, call_key) = keys;
        RoleRules { kind_key, operation_key, call_key, kinds, operations, calls, events, undecided }
    }

    /// The roles of a span made of these parts (the tests hold the rules to the Python ones with it).
    fn of(&self, name: &str, attributes: Vec<(String, Option<String>)>, events: Vec<String>) -> i64 {
        let pairs: Vec<(std::borrow::Cow<str>, Value)> = attributes.iter()
            .map(|(key, value)| (key.as_str().into(), value.as_deref().map_or(Value::Empty, |text| Value::Str(text.into()))))
            .collect();
        let events: Vec<&str> = events.iter().map(String::as_str).collect();
        self.decide(name, &pairs, &events)
    }
}

/// A value's text as the rules read it: Some(Some(text)), Some(None) for none (absent, empty, a structure), None when
/// the Python rules would read it as the text of a number, a flag or bytes.
fn text<'v>(value: Option<&'v Value>) -> Option<Option<&'v str>> {
    match value {
        Some(Value::Str(text)) => Some(Some(text.as_ref())),
        None | Some(Value::Empty | Value::Array(_) | Value::KvList(_)) => Some(None),
        Some(_) => None,
    }
}

impl RoleRules {
    pub fn roles(&self, span: &SpanRecord) -> i64 {
        let events: Vec<&str> = span.events.iter().map(|event| event.name.as_ref()).collect();
        self.decide(&span.name, &span.attributes, &events)
    }

    fn decide(&self, name: &str, attributes: &[(std::borrow::Cow<str>, Value)], events: &[&str]) -> i64 {
        let (mut kind, mut operation, mut call) = (None, None, None);
        for (key, value) in attributes {
            let key = key.as_ref();
            if self.undecided.contains(key) {
                return -1;
            }
            // a key given twice: the last value wins, as in the attributes
            if key == self.kind_key {
                kind = Some(value);
            } else if key == self.operation_key {
                operation = Some(value);
            } else if key == self.call_key {
                call = Some(value);
            }
        }
        let (Some(kind), Some(operation), Some(call)) = (text(kind), text(operation), text(call)) else { return -1 };
        let bits = |table: &FxHashMap<String, u8>, key: Option<&str>| key.and_then(|key| table.get(key)).copied().unwrap_or(0);
        // the AI SDK's operation, else (none, or empty) the span's name
        let called = call.filter(|text| !text.is_empty()).unwrap_or(name);
        let mut roles = bits(&self.kinds, kind) | bits(&self.operations, operation) | bits(&self.calls, Some(called));
        for event in events {
            roles |= bits(&self.events, Some(event));
        }
        i64::from(roles)
    }
}
