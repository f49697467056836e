//! OTLP ExportTraceServiceRequest, protobuf wire format, read over the borrowed request bytes: only the messages
//! and fields the span records carry are decoded, the rest skipped. Field numbers: opentelemetry-proto's trace
//! and common protos (v1). Errors match the Python protobuf runtime's where tested (nesting past its depth limit,
//! truncated data). A string that is not valid UTF-8, which that runtime refuses the whole request for, costs only
//! the spans it belongs to: the span holding it, or every span under a resource or scope holding it; each such
//! span's record says which field (`SpanRecord::invalid`), and the request's other spans are read as usual.

pub mod bindings;
pub mod roles;
pub mod texts;
mod wire;

use std::borrow::Cow;

pub use wire::DecodeError;
use wire::{deeper, Field, Reader};

pub enum Value<'a> {
    Str(Cow<'a, str>),
    Bool(bool),
    Int(i64),
    Double(f64),
    Bytes(&'a [u8]),
    Array(Vec<Value<'a>>),
    KvList(Vec<(Cow<'a, str>, Value<'a>)>),
    Empty,
}

pub type Attributes<'a> = Vec<(Cow<'a, str>, Value<'a>)>;

pub struct Event<'a> {
    pub name: Cow<'a, str>,
    pub time_unix_nano: u64,
    pub attributes: Attributes<'a>,
}

pub struct SpanRecord<'a> {
    pub trace_id: &'a [u8],
    pub span_id: &'a [u8],
    pub parent_span_id: &'a [u8],
    /// Invalid UTF-8 in it replaced (U+FFFD), for the message that rejects the span.
    pub name: Cow<'a, str>,
    pub kind: i64,
    pub start_unix_nano: u64,
    pub end_unix_nano: u64,
    pub attributes: Attributes<'a>,
    pub events: Vec<Event<'a>>,
    pub size: usize,
    pub resource: usize,
    pub scope: Cow<'a, str>,
    /// Its status: the code (0 unset, 1 ok, 2 error) and the message, which a failed run's error reads.
    pub status_code: i64,
    pub status_message: Cow<'a, str>,
    /// The first field of the span, or of its scope, that is not valid UTF-8 (e.g. "attribute 'input.value'").
    pub invalid: Option<String>,
}

pub struct Resource<'a> {
    pub attributes: Attributes<'a>,
    /// Its first field that is not valid UTF-8: every span under it is rejected with it.
    pub invalid: Option<String>,
}

pub struct Request<'a> {
    pub resources: Vec<Resource<'a>>,
    pub spans: Vec<SpanRecord<'a>>,
}

/// A string field's text. Invalid UTF-8 is not the request's error but its span's: `bad` is set, and the text has
/// U+FFFD in place of each invalid sequence (what the message rejecting the span shows).
fn text<'a>(bytes: &'a [u8], bad: &mut bool) -> Cow<'a, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text), // checked word by word on ASCII, unlike from_utf8_lossy
        Err(_) => {
            *bad = true;
            String::from_utf8_lossy(bytes)
        }
    }
}

/// The first field found not valid UTF-8 in a span (or a resource or scope), named for the message rejecting it.
#[derive(Default)]
struct Invalid(Option<String>);

impl Invalid {
    fn note(&mut self, bad: bool, what: impl FnOnce() -> String) {
        if bad && self.0.is_none() {
            self.0 = Some(what());
        }
    }
}

/// Which span attributes become values; the others are only checked (strings' UTF-8, nesting) as the protobuf
/// runtime would check them.
pub type Keep<'k> = &'k (dyn Fn(&str) -> bool + Sync);

pub fn decode<'a>(body: &'a [u8], keep: Keep) -> Result<Request<'a>, DecodeError> {
    let mut request = Request { resources: Vec::new(), spans: Vec::new() };
    let mut reader = Reader::new(body, 1);
    while let Some((number, field)) = reader.next()? {
        if let (1, Field::Bytes(bytes)) = (number, field) {
            resource_spans(bytes, 2, &mut request, keep)?;
        }
    }
    Ok(request)
}

fn resource_spans<'a>(data: &'a [u8], depth: u32, request: &mut Request<'a>, keep: Keep) -> Result<(), DecodeError> {
    let index = request.resources.len();
    let mut resource = Resource { attributes: Vec::new(), invalid: None };
    let mut invalid = Invalid::default();
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        match (number, field) {
            // a message field given twice is merged, as the protobuf runtime merges it
            (1, Field::Bytes(bytes)) => {
                let item_depth = deeper(depth)?;
                let mut items = Reader::new(bytes, item_depth);
                while let Some((item_number, item)) = items.next()? {
                    if let (1, Field::Bytes(pair)) = (item_number, item) {
                        let mut bad = false;
                        let (key, value) = key_value(pair, deeper(item_depth)?, &mut bad)?;
                        invalid.note(bad, || format!("resource attribute '{key}'"));
                        resource.attributes.push((key, value));
                    }
                }
            }
            (2, Field::Bytes(bytes)) => scope_spans(bytes, deeper(depth)?, index, request, keep)?,
            (3, Field::Bytes(bytes)) => {
                let mut bad = false;
                text(bytes, &mut bad);
                invalid.note(bad, || "the resource's schema URL".into());
            }
            _ => {}
        }
    }
    resource.invalid = invalid.0;
    request.resources.push(resource);
    Ok(())
}

/// A message whose one field read is a repeated message in field 1: ArrayValue's values, KeyValueList's values.
fn repeated<'a, T>(
    data: &'a [u8],
    depth: u32,
    bad: &mut bool,
    parse: fn(&'a [u8], u32, &mut bool) -> Result<T, DecodeError>,
) -> Result<Vec<T>, DecodeError> {
    let mut items = Vec::new();
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        if let (1, Field::Bytes(bytes)) = (number, field) {
            items.push(parse(bytes, deeper(depth)?, bad)?);
        }
    }
    Ok(items)
}

fn scope_spans<'a>(
    data: &'a [u8], depth: u32, resource: usize, request: &mut Request<'a>, keep: Keep,
) -> Result<(), DecodeError> {
    let mut scope = Cow::Borrowed("");
    let mut invalid = Invalid::default();
    let mut spans = Vec::new();
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        match (number, field) {
            (1, Field::Bytes(bytes)) => {
                if let Some(name) = scope_name(bytes, deeper(depth)?, &mut invalid)? {
                    scope = name; // merged: a second scope without a name keeps the first's
                }
            }
            (2, Field::Bytes(bytes)) => spans.push(span(bytes, deeper(depth)?, resource, keep)?),
            (3, Field::Bytes(bytes)) => {
                let mut bad = false;
                text(bytes, &mut bad);
                invalid.note(bad, || "the scope's schema URL".into());
            }
            _ => {}
        }
    }
    for mut record in spans {
        record.scope = scope.clone(); // the scope may come after its spans on the wire
        if invalid.0.is_some() {
            record.invalid.clone_from(&invalid.0); // the scope's problem is each span's, whatever the span's own
        }
        request.spans.push(record);
    }
    Ok(())
}

fn scope_name<'a>(data: &'a [u8], depth: u32, invalid: &mut Invalid) -> Result<Option<Cow<'a, str>>, DecodeError> {
    let mut name = None;
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        let mut bad = false;
        match (number, field) {
            (1, Field::Bytes(bytes)) => {
                name = Some(text(bytes, &mut bad));
                invalid.note(bad, || "the scope's name".into());
            }
            (2, Field::Bytes(bytes)) => {
                text(bytes, &mut bad);
                invalid.note(bad, || "the scope's version".into());
            }
            (3, Field::Bytes(bytes)) => {
                let (key, _) = key_value(bytes, deeper(depth)?, &mut bad)?;
                invalid.note(bad, || format!("scope attribute '{key}'"));
            }
            _ => {}
        }
    }
    Ok(name)
}

fn span<'a>(data: &'a [u8], depth: u32, resource: usize, keep: Keep) -> Result<SpanRecord<'a>, DecodeError> {
    let mut record = SpanRecord {
        trace_id: &[],
        span_id: &[],
        parent_span_id: &[],
        name: Cow::Borrowed(""),
        kind: 0,
        start_unix_nano: 0,
        end_unix_nano: 0,
        attributes: Vec::new(),
        events: Vec::new(),
        size: data.len(),
        resource,
        scope: Cow::Borrowed(""),
        status_code: 0,
        status_message: Cow::Borrowed(""),
        invalid: None,
    };
    let mut invalid = Invalid::default();
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        let mut bad = false;
        match (number, field) {
            (1, Field::Bytes(bytes)) => record.trace_id = bytes,
            (2, Field::Bytes(bytes)) => record.span_id = bytes,
            (3, Field::Bytes(bytes)) => {
                text(bytes, &mut bad);
                invalid.note(bad, || "the trace state".into());
            }
            (4, Field::Bytes(bytes)) => record.parent_span_id = bytes,
            (5, Field::Bytes(bytes)) => {
                record.name = text(bytes, &mut bad);
                invalid.note(bad, || "the name".into());
            }
            // An enum (int32): a negative value is sent as a ten-byte varint.
            (6, Field::Varint(value)) => record.kind = i64::from(value as i32),
            (7, Field::Fixed64(value)) => record.start_unix_nano = value,
            (8, Field::Fixed64(value)) => record.end_unix_nano = value,
            (9, Field::Bytes(bytes)) => {
                let (key, value) = kept_key_value(bytes, deeper(depth)?, keep, &mut bad)?;
                invalid.note(bad, || format!("attribute '{key}'"));
                if let Some(value) = value {
                    record.attributes.push((key, value));
                }
            }
            (11, Field::Bytes(bytes)) => {
                let event = event(bytes, deeper(depth)?, &mut bad)?;
                invalid.note(bad, || format!("event '{}'", event.name));
                record.events.push(event);
            }
            (13, Field::Bytes(bytes)) => {
                link(bytes, deeper(depth)?, &mut bad)?;
                invalid.note(bad, || "a link".into());
            }
            (15, Field::Bytes(bytes)) => {
                (record.status_code, record.status_message) = status(bytes, deeper(depth)?, &mut bad)?;
                invalid.note(bad, || "the status message".into());
            }
            _ => {}
        }
    }
    record.invalid = invalid.0;
    Ok(record)
}

fn event<'a>(data: &'a [u8], depth: u32, bad: &mut bool) -> Result<Event<'a>, DecodeError> {
    let mut out = Event { name: Cow::Borrowed(""), time_unix_nano: 0, attributes: Vec::new() };
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        match (number, field) {
            (1, Field::Fixed64(value)) => out.time_unix_nano = value,
            (2, Field::Bytes(bytes)) => out.name = text(bytes, bad),
            (3, Field::Bytes(bytes)) => out.attributes.push(key_value(bytes, deeper(depth)?, bad)?),
            _ => {}
        }
    }
    Ok(out)
}

/// Links are not carried, but their strings are checked as the protobuf runtime checks them.
fn link(data: &[u8], depth: u32, bad: &mut bool) -> Result<(), DecodeError> {
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        match (number, field) {
            (3, Field::Bytes(bytes)) => {
                text(bytes, bad);
            }
            (4, Field::Bytes(bytes)) => check_key_value(bytes, deeper(depth)?, bad)?,
            _ => {}
        }
    }
    Ok(())
}

/// A span's status: (code, message); the message's text is checked as every string is.
fn status<'a>(data: &'a [u8], depth: u32, bad: &mut bool) -> Result<(i64, Cow<'a, str>), DecodeError> {
    let (mut code, mut message) = (0, Cow::Borrowed(""));
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        match (number, field) {
            (2, Field::Bytes(bytes)) => message = text(bytes, bad),
            // An enum (int32), as the span's kind.
            (3, Field::Varint(value)) => code = i64::from(value as i32),
            _ => {}
        }
    }
    Ok((code, message))
}

fn key_value<'a>(data: &'a [u8], depth: u32, bad: &mut bool) -> Result<(Cow<'a, str>, Value<'a>), DecodeError> {
    let mut key = Cow::Borrowed("");
    let mut value = Value::Empty;
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        match (number, field) {
            (1, Field::Bytes(bytes)) => key = text(bytes, bad),
            (2, Field::Bytes(bytes)) => merge(&mut value, any_value(bytes, deeper(depth)?, bad)?),
            _ => {}
        }
    }
    Ok((key, value))
}

/// A span attribute: its key, and its value when `keep` keeps the key (the key may come after the value on the
/// wire), else None: only checked, nothing allocated (an embedding vector is 1,536 values). Read once: an attribute
/// has one value field nearly always, kept as bytes while the key is looked for; one given twice (merged) is read
/// again whole by key_value.
fn kept_key_value<'a>(
    data: &'a [u8], depth: u32, keep: Keep, bad: &mut bool,
) -> Result<(Cow<'a, str>, Option<Value<'a>>), DecodeError> {
    let mut key = Cow::Borrowed("");
    let mut key_bad = false;
    let mut values: (Option<&'a [u8]>, bool) = (None, false); // the value's bytes; whether there were more
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        match (number, field) {
            (1, Field::Bytes(bytes)) => key = text(bytes, &mut key_bad),
            (2, Field::Bytes(bytes)) => values = (Some(bytes), values.0.is_some()),
            _ => {}
        }
    }
    *bad |= key_bad;
    match (values, keep(&key)) {
        ((None, _), true) => Ok((key, Some(Value::Empty))),
        ((Some(bytes), false), true) => Ok((key, Some(any_value(bytes, deeper(depth)?, bad)?))),
        ((Some(_), true), true) => key_value(data, depth, bad).map(|(key, value)| (key, Some(value))),
        ((None, _), false) => Ok((key, None)),
        ((Some(bytes), false), false) => check_any_value(bytes, deeper(depth)?, bad).map(|()| (key, None)),
        ((Some(_), true), false) => {
            let mut reader = Reader::new(data, depth);
            while let Some((number, field)) = reader.next()? {
                if let (2, Field::Bytes(bytes)) = (number, field) {
                    check_any_value(bytes, deeper(depth)?, bad)?;
                }
            }
            Ok((key, None))
        }
    }
}

/// What any_value checks, without building the value.
fn check_any_value(data: &[u8], depth: u32, bad: &mut bool) -> Result<(), DecodeError> {
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        match (number, field) {
            (1, Field::Bytes(bytes)) => {
                text(bytes, bad);
            }
            (5 | 6, Field::Bytes(bytes)) => {
                let item_depth = deeper(depth)?;
                let mut items = Reader::new(bytes, item_depth);
                while let Some((item_number, item)) = items.next()? {
                    if let (1, Field::Bytes(item_bytes)) = (item_number, item) {
                        if number == 5 {
                            check_any_value(item_bytes, deeper(item_depth)?, bad)?;
                        } else {
                            check_key_value(item_bytes, deeper(item_depth)?, bad)?;
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn check_key_value(data: &[u8], depth: u32, bad: &mut bool) -> Result<(), DecodeError> {
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        match (number, field) {
            (1, Field::Bytes(bytes)) => {
                text(bytes, bad);
            }
            (2, Field::Bytes(bytes)) => check_any_value(bytes, deeper(depth)?, bad)?,
            _ => {}
        }
    }
    Ok(())
}

fn any_value<'a>(data: &'a [u8], depth: u32, bad: &mut bool) -> Result<Value<'a>, DecodeError> {
    let mut value = Value::Empty; // a oneof: the last member on the wire wins (an array or kvlist given twice merges)
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        let member = match (number, field) {
            (1, Field::Bytes(bytes)) => Value::Str(text(bytes, bad)),
            (2, Field::Varint(raw)) => Value::Bool(raw != 0),
            (3, Field::Varint(raw)) => Value::Int(raw as i64),
            (4, Field::Fixed64(raw)) => Value::Double(f64::from_bits(raw)),
            (5, Field::Bytes(bytes)) => Value::Array(repeated(bytes, deeper(depth)?, bad, any_value)?),
            (6, Field::Bytes(bytes)) => Value::KvList(repeated(bytes, deeper(depth)?, bad, key_value)?),
            (7, Field::Bytes(bytes)) => Value::Bytes(bytes),
            _ => continue,
        };
        merge(&mut value, member);
    }
    Ok(value)
}

/// A value merged into another as the protobuf runtime merges a message field given twice: arrays and kvlists
/// append, a value that sets nothing keeps the one before, any other replaces it.
fn merge<'a>(into: &mut Value<'a>, value: Value<'a>) {
    match (into, value) {
        (Value::Array(items), Value::Array(more)) => items.extend(more),
        (Value::KvList(pairs), Value::KvList(more)) => pairs.extend(more),
        (_, Value::Empty) => {}
        (slot, value) => *slot = value,
    }
}
