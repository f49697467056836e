//! OTLP ExportTraceServiceRequest, protobuf wire format, read over the borrowed request bytes: only the messages
//! and fields the span records carry are decoded, the rest skipped. Field numbers: opentelemetry-proto's trace
//! and common protos (v1). Errors match the Python protobuf runtime's where tested (invalid UTF-8 in a string,
//! nesting past its depth limit, truncated data).

pub mod bindings;

/// upb's default message nesting limit (the request itself is at depth 1).
const MAX_DEPTH: u32 = 100;

#[derive(Debug)]
pub struct DecodeError(pub String);

pub enum Value<'a> {
    Str(&'a str),
    Bool(bool),
    Int(i64),
    Double(f64),
    Bytes(&'a [u8]),
    Array(Vec<Value<'a>>),
    KvList(Vec<(&'a str, Value<'a>)>),
    Empty,
}

pub type Attributes<'a> = Vec<(&'a str, Value<'a>)>;

pub struct Event<'a> {
    pub name: &'a str,
    pub time_unix_nano: u64,
    pub attributes: Attributes<'a>,
}

pub struct SpanRecord<'a> {
    pub trace_id: &'a [u8],
    pub span_id: &'a [u8],
    pub parent_span_id: &'a [u8],
    pub name: &'a str,
    pub kind: i64,
    pub start_unix_nano: u64,
    pub end_unix_nano: u64,
    pub attributes: Attributes<'a>,
    pub events: Vec<Event<'a>>,
    pub size: usize,
    pub resource: usize,
    pub scope: &'a str,
}

pub struct Request<'a> {
    pub resources: Vec<Attributes<'a>>,
    pub spans: Vec<SpanRecord<'a>>,
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    /// The message's nesting depth: unknown groups inside it count from there.
    depth: u32,
}

enum Field<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32,
    Bytes(&'a [u8]),
    /// An unknown group (deprecated wire types 3 and 4), skipped whole as the protobuf runtime skips it.
    Group,
}

/// The largest field number protobuf allows (2^29 - 1).
const MAX_FIELD_NUMBER: u64 = (1 << 29) - 1;

fn error<T>(what: &str) -> Result<T, DecodeError> {
    Err(DecodeError(what.to_string()))
}

impl<'a> Reader<'a> {
    fn new(data: &'a [u8], depth: u32) -> Self {
        Reader { data, pos: 0, depth }
    }

    fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut value: u64 = 0;
        for shift in (0..70).step_by(7) {
            let Some(&byte) = self.data.get(self.pos) else { return error("truncated message") };
            self.pos += 1;
            if shift == 63 && byte > 1 {
                return error("varint too long");
            }
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        error("varint too long")
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.checked_add(len).filter(|&end| end <= self.data.len());
        let Some(end) = end else { return error("truncated message") };
        let out = &self.data[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    /// The next field's number and value; None at the end of the message.
    fn next(&mut self) -> Result<Option<(u64, Field<'a>)>, DecodeError> {
        if self.pos >= self.data.len() {
            return Ok(None);
        }
        let (number, wire_type) = self.tag()?;
        if wire_type == 4 {
            return error("end of a group that was not started");
        }
        Ok(Some((number, self.value(number, wire_type, self.depth)?)))
    }

    fn tag(&mut self) -> Result<(u64, u64), DecodeError> {
        let tag = self.varint()?;
        let number = tag >> 3;
        if number == 0 || number > MAX_FIELD_NUMBER {
            return error("invalid field number");
        }
        Ok((number, tag & 7))
    }

    fn value(&mut self, number: u64, wire_type: u64, depth: u32) -> Result<Field<'a>, DecodeError> {
        Ok(match wire_type {
            0 => Field::Varint(self.varint()?),
            1 => Field::Fixed64(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes"))),
            2 => {
                let len = usize::try_from(self.varint()?).map_err(|_| DecodeError("length too large".into()))?;
                Field::Bytes(self.take(len)?)
            }
            3 => {
                self.skip_group(number, depth)?;
                Field::Group
            }
            5 => {
                self.take(4)?;
                Field::Fixed32
            }
            _ => return error("invalid wire type"),
        })
    }

    /// Up to the group's end; a group nests one level deeper than what holds it, under the same limit as
    /// messages (upb allows a group at level 101 where a message stops at 100).
    fn skip_group(&mut self, number: u64, depth: u32) -> Result<(), DecodeError> {
        if depth > MAX_DEPTH {
            return error("message nested past the depth limit (100)");
        }
        loop {
            if self.pos >= self.data.len() {
                return error("truncated group");
            }
            let (inner, wire_type) = self.tag()?;
            if wire_type == 4 {
                return if inner == number { Ok(()) } else { error("end of another group") };
            }
            self.value(inner, wire_type, depth + 1)?;
        }
    }
}

fn text(bytes: &[u8]) -> Result<&str, DecodeError> {
    std::str::from_utf8(bytes).map_err(|_| DecodeError("string field had bad UTF-8".into()))
}

fn deeper(depth: u32) -> Result<u32, DecodeError> {
    if depth >= MAX_DEPTH {
        return error("message nested past the depth limit (100)");
    }
    Ok(depth + 1)
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
    request.resources.push(Vec::new());
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        match (number, field) {
            // a message field given twice is merged, as the protobuf runtime merges it
            (1, Field::Bytes(bytes)) => request.resources[index].extend(repeated(bytes, deeper(depth)?, key_value)?),
            (2, Field::Bytes(bytes)) => scope_spans(bytes, deeper(depth)?, index, request, keep)?,
            (3, Field::Bytes(bytes)) => {
                text(bytes)?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// A message whose one field read is a repeated message in field 1: Resource's attributes, ArrayValue's values,
/// KeyValueList's values.
fn repeated<'a, T>(
    data: &'a [u8],
    depth: u32,
    parse: fn(&'a [u8], u32) -> Result<T, DecodeError>,
) -> Result<Vec<T>, DecodeError> {
    let mut items = Vec::new();
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        if let (1, Field::Bytes(bytes)) = (number, field) {
            items.push(parse(bytes, deeper(depth)?)?);
        }
    }
    Ok(items)
}

fn scope_spans<'a>(
    data: &'a [u8], depth: u32, resource: usize, request: &mut Request<'a>, keep: Keep,
) -> Result<(), DecodeError> {
    let mut scope = "";
    let mut spans = Vec::new();
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        match (number, field) {
            (1, Field::Bytes(bytes)) => {
                if let Some(name) = scope_name(bytes, deeper(depth)?)? {
                    scope = name; // merged: a second scope without a name keeps the first's
                }
            }
            (2, Field::Bytes(bytes)) => spans.push(span(bytes, deeper(depth)?, resource, keep)?),
            (3, Field::Bytes(bytes)) => {
                text(bytes)?;
            }
            _ => {}
        }
    }
    for mut record in spans {
        record.scope = scope; // the scope may come after its spans on the wire
        request.spans.push(record);
    }
    Ok(())
}

fn scope_name(data: &[u8], depth: u32) -> Result<Option<&str>, DecodeError> {
    let mut name = None;
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        match (number, field) {
            (1, Field::Bytes(bytes)) => name = Some(text(bytes)?),
            (2, Field::Bytes(bytes)) => {
                text(bytes)?;
            }
            (3, Field::Bytes(bytes)) => {
                key_value(bytes, deeper(depth)?)?;
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
        name: "",
        kind: 0,
        start_unix_nano: 0,
        end_unix_nano: 0,
        attributes: Vec::new(),
        events: Vec::new(),
        size: data.len(),
        resource,
        scope: "",
    };
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        match (number, field) {
            (1, Field::Bytes(bytes)) => record.trace_id = bytes,
            (2, Field::Bytes(bytes)) => record.span_id = bytes,
            (3, Field::Bytes(bytes)) => {
                text(bytes)?; // trace_state
            }
            (4, Field::Bytes(bytes)) => record.parent_span_id = bytes,
            (5, Field::Bytes(bytes)) => record.name = text(bytes)?,
            // An enum (int32): a negative value is sent as a ten-byte varint.
            (6, Field::Varint(value)) => record.kind = i64::from(value as i32),
            (7, Field::Fixed64(value)) => record.start_unix_nano = value,
            (8, Field::Fixed64(value)) => record.end_unix_nano = value,
            (9, Field::Bytes(bytes)) => {
                if let Some(pair) = kept_key_value(bytes, deeper(depth)?, keep)? {
                    record.attributes.push(pair);
                }
            }
            (11, Field::Bytes(bytes)) => record.events.push(event(bytes, deeper(depth)?)?),
            (13, Field::Bytes(bytes)) => link(bytes, deeper(depth)?)?,
            (15, Field::Bytes(bytes)) => status(bytes, deeper(depth)?)?,
            _ => {}
        }
    }
    Ok(record)
}

fn event(data: &[u8], depth: u32) -> Result<Event<'_>, DecodeError> {
    let mut out = Event { name: "", time_unix_nano: 0, attributes: Vec::new() };
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        match (number, field) {
            (1, Field::Fixed64(value)) => out.time_unix_nano = value,
            (2, Field::Bytes(bytes)) => out.name = text(bytes)?,
            (3, Field::Bytes(bytes)) => out.attributes.push(key_value(bytes, deeper(depth)?)?),
            _ => {}
        }
    }
    Ok(out)
}

/// Links are not carried, but their strings are checked as the protobuf runtime checks them.
fn link(data: &[u8], depth: u32) -> Result<(), DecodeError> {
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        match (number, field) {
            (3, Field::Bytes(bytes)) => {
                text(bytes)?;
            }
            (4, Field::Bytes(bytes)) => {
                key_value(bytes, deeper(depth)?)?;
            }
            _ => {}
        }
    }
    Ok(())
}

fn status(data: &[u8], depth: u32) -> Result<(), DecodeError> {
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        if let (2, Field::Bytes(bytes)) = (number, field) {
            text(bytes)?;
        }
    }
    Ok(())
}

fn key_value(data: &[u8], depth: u32) -> Result<(&str, Value<'_>), DecodeError> {
    let mut key = "";
    let mut value = Value::Empty;
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        match (number, field) {
            (1, Field::Bytes(bytes)) => key = text(bytes)?,
            (2, Field::Bytes(bytes)) => merge(&mut value, any_value(bytes, deeper(depth)?)?),
            _ => {}
        }
    }
    Ok((key, value))
}

/// A span attribute: its value when `keep` keeps its key (the key may come after the value on the wire), else
/// only checked, nothing allocated (an embedding vector is 1,536 values).
fn kept_key_value<'a>(data: &'a [u8], depth: u32, keep: Keep) -> Result<Option<(&'a str, Value<'a>)>, DecodeError> {
    let mut key = "";
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        if let (1, Field::Bytes(bytes)) = (number, field) {
            key = text(bytes)?;
        }
    }
    if keep(key) {
        return key_value(data, depth).map(Some);
    }
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        if let (2, Field::Bytes(bytes)) = (number, field) {
            check_any_value(bytes, deeper(depth)?)?;
        }
    }
    Ok(None)
}

/// What any_value checks, without building the value.
fn check_any_value(data: &[u8], depth: u32) -> Result<(), DecodeError> {
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        match (number, field) {
            (1, Field::Bytes(bytes)) => {
                text(bytes)?;
            }
            (5 | 6, Field::Bytes(bytes)) => {
                let item_depth = deeper(depth)?;
                let mut items = Reader::new(bytes, item_depth);
                while let Some((item_number, item)) = items.next()? {
                    if let (1, Field::Bytes(item_bytes)) = (item_number, item) {
                        if number == 5 {
                            check_any_value(item_bytes, deeper(item_depth)?)?;
                        } else {
                            check_key_value(item_bytes, deeper(item_depth)?)?;
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn check_key_value(data: &[u8], depth: u32) -> Result<(), DecodeError> {
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        match (number, field) {
            (1, Field::Bytes(bytes)) => {
                text(bytes)?;
            }
            (2, Field::Bytes(bytes)) => check_any_value(bytes, deeper(depth)?)?,
            _ => {}
        }
    }
    Ok(())
}

fn any_value(data: &[u8], depth: u32) -> Result<Value<'_>, DecodeError> {
    let mut value = Value::Empty; // a oneof: the last member on the wire wins (an array or kvlist given twice merges)
    let mut reader = Reader::new(data, depth);
    while let Some((number, field)) = reader.next()? {
        let member = match (number, field) {
            (1, Field::Bytes(bytes)) => Value::Str(text(bytes)?),
            (2, Field::Varint(raw)) => Value::Bool(raw != 0),
            (3, Field::Varint(raw)) => Value::Int(raw as i64),
            (4, Field::Fixed64(raw)) => Value::Double(f64::from_bits(raw)),
            (5, Field::Bytes(bytes)) => Value::Array(repeated(bytes, deeper(depth)?, any_value)?),
            (6, Field::Bytes(bytes)) => Value::KvList(repeated(bytes, deeper(depth)?, key_value)?),
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
