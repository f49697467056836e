//! OTLP/JSON to the protobuf bytes protobuf's `json_format.ParseDict` (with unknown fields ignored) and
//! `SerializeToString` make of the same request, for the requests exporters send: the protobuf reader then reads
//! them (one decoding of spans, and a span's size in protobuf bytes as the assembler's budget counts it).
//!
//! Only a strict subset is read here; anything else gives None and the caller takes the general path
//! (sources/otlp/spans.py), which reads, or refuses with its reason, whatever ParseDict does: a key this schema
//! does not know, null, a field given by both of its names, an id that is not plain hex, an integer or a double
//! in a string or a float, a negative zero, an enum outside its names and numbers, bytes that are not padded
//! standard base64, links (ParseDict reads their hex ids as base64), values nested past MAX_DEPTH.
use serde_json::{Map, Value as Json};

/// AnyValue nesting read here; deeper goes the general path (the protobuf reader's limit is 100 messages).
const MAX_DEPTH: u32 = 32;

type Obj = Map<String, Json>;

/// A message's fields by their JSON and proto names, in the order of `names`; None for an unknown key, a null or a
/// field named twice.
fn fields<'j, const N: usize>(object: &'j Obj, names: [(&str, &str); N]) -> Option<[Option<&'j Json>; N]> {
    let mut found: [Option<&Json>; N] = [None; N];
    for (key, value) in object {
        let at = names.iter().position(|(json, proto)| key == json || key == proto)?;
        if value.is_null() || found[at].is_some() {
            return None;
        }
        found[at] = Some(value);
    }
    Some(found)
}

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, u64::from(field << 3 | u32::from(wire)));
}

fn delimited(out: &mut Vec<u8>, field: u32, payload: &[u8]) {
    tag(out, field, 2);
    varint(out, payload.len() as u64);
    out.extend_from_slice(payload);
}

/// A nested message, written even when empty (message fields have presence).
fn message(out: &mut Vec<u8>, field: u32, write: impl FnOnce(&mut Vec<u8>) -> Option<()>) -> Option<()> {
    let mut inner = Vec::new();
    write(&mut inner)?;
    delimited(out, field, &inner);
    Some(())
}

fn string(value: &Json) -> Option<&str> {
    value.as_str()
}

/// A proto3 string or bytes field: left out when empty.
fn put_str(out: &mut Vec<u8>, field: u32, value: Option<&Json>) -> Option<()> {
    if let Some(value) = value {
        let text = string(value)?;
        if !text.is_empty() {
            delimited(out, field, text.as_bytes());
        }
    }
    Some(())
}

/// An integer as ParseDict reads it, in this subset: a JSON integer, or a string of decimal digits (a leading "-").
fn integer(value: &Json) -> Option<i128> {
    match value {
        Json::Number(number) => number.as_i64().map(i128::from).or_else(|| number.as_u64().map(i128::from)),
        Json::String(text) => {
            let digits = text.strip_prefix('-').unwrap_or(text);
            (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) && digits.len() <= 20)
                .then(|| text.parse::<i128>().ok())?
        }
        _ => None,
    }
}

/// Varint fields (uint32 and int64 counts, enums as int32): left out when zero.
fn put_varint(out: &mut Vec<u8>, field: u32, value: Option<&Json>, min: i128, max: i128) -> Option<()> {
    if let Some(value) = value {
        let number = integer(value).filter(|number| (min..=max).contains(number))?;
        if number != 0 {
            tag(out, field, 0);
            varint(out, number as i64 as u64); // a negative int32 or int64 is ten bytes, sign-extended
        }
    }
    Some(())
}

/// A fixed64 (`wide`) or fixed32 field: left out when zero.
fn put_fixed(out: &mut Vec<u8>, field: u32, value: Option<&Json>, wide: bool) -> Option<()> {
    if let Some(value) = value {
        let max = if wide { i128::from(u64::MAX) } else { i128::from(u32::MAX) };
        let number = integer(value).filter(|number| (0..=max).contains(number))?;
        if number != 0 {
            tag(out, field, if wide { 1 } else { 5 });
            out.extend_from_slice(&(number as u64).to_le_bytes()[..if wide { 8 } else { 4 }]);
        }
    }
    Some(())
}

/// An enum by its number or its name (`names[i]` is number i).
fn put_enum(out: &mut Vec<u8>, field: u32, value: Option<&Json>, names: &[&str]) -> Option<()> {
    let number = match value {
        None => return Some(()),
        Some(Json::String(name)) => names.iter().position(|known| known == name)?,
        Some(other) => usize::try_from(integer(other)?).ok().filter(|&number| number < names.len())?,
    };
    if number != 0 {
        tag(out, field, 0);
        varint(out, number as u64);
    }
    Some(())
}

fn hex_id(out: &mut Vec<u8>, field: u32, value: Option<&Json>) -> Option<()> {
    let Some(value) = value else { return Some(()) };
    let text = string(value)?.as_bytes();
    if text.len() % 2 != 0 {
        return None;
    }
    let digit = |b: u8| (b as char).to_digit(16);
    let bytes: Vec<u8> =
        text.chunks(2).map(|pair| Some((digit(pair[0])? << 4 | digit(pair[1])?) as u8)).collect::<Option<_>>()?;
    if !bytes.is_empty() {
        delimited(out, field, &bytes);
    }
    Some(())
}

/// Padded standard base64 only (what ParseDict's lenient URL-safe decoding reads the same way).
fn base64(text: &str) -> Option<Vec<u8>> {
    let text = text.as_bytes();
    if text.len() % 4 != 0 {
        return None;
    }
    let padding = text.iter().rev().take_while(|&&b| b == b'=').count();
    if padding > 2 {
        return None;
    }
    let value = |b: u8| -> Option<u32> {
        Some(match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    for (index, quad) in text.chunks(4).enumerate() {
        let last = index == text.len() / 4 - 1;
        let pad = if last { padding } else { 0 };
        let mut bits = 0u32;
        for &b in &quad[..4 - pad] {
            bits = bits << 6 | value(b)?;
        }
        bits <<= 6 * pad as u32;
        let bytes = bits.to_be_bytes();
        out.extend_from_slice(&bytes[1..4 - pad]);
    }
    Some(out)
}

fn any_value(out: &mut Vec<u8>, value: &Json, depth: u32) -> Option<()> {
    if depth > MAX_DEPTH {
        return None;
    }
    let [s, b, i, d, array, kvlist, bytes] = fields(value.as_object()?, [
        ("stringValue", "string_value"), ("boolValue", "bool_value"), ("intValue", "int_value"),
        ("doubleValue", "double_value"), ("arrayValue", "array_value"), ("kvlistValue", "kvlist_value"),
        ("bytesValue", "bytes_value"),
    ])?;
    if [s, b, i, d, array, kvlist, bytes].iter().filter(|field| field.is_some()).count() > 1 {
        return None; // ParseDict refuses a second member of the oneof
    }
    // A oneof member is written even when it is its type's zero.
    if let Some(text) = s {
        delimited(out, 1, string(text)?.as_bytes());
    } else if let Some(flag) = b {
        tag(out, 2, 0);
        out.push(u8::from(flag.as_bool()?));
    } else if let Some(number) = i {
        let number = i64::try_from(integer(number)?).ok()?;
        tag(out, 3, 0);
        varint(out, number as u64);
    } else if let Some(number) = d {
        let Json::Number(number) = number else { return None };
        // -0 reads as -0.0 here and as 0 in Python (an integer): a negative zero goes the general path
        let number = number.as_f64().filter(|number| !(*number == 0.0 && number.is_sign_negative()))?;
        tag(out, 4, 1);
        out.extend_from_slice(&number.to_le_bytes());
    } else if let Some(array) = array {
        message(out, 5, |inner| {
            let [values] = fields(array.as_object()?, [("values", "values")])?;
            for item in values.map_or(Some(&Vec::new()), Json::as_array)? {
                message(inner, 1, |item_out| any_value(item_out, item, depth + 1))?;
            }
            Some(())
        })?;
    } else if let Some(kvlist) = kvlist {
        message(out, 6, |inner| {
            let [values] = fields(kvlist.as_object()?, [("values", "values")])?;
            key_values(inner, 1, values, depth + 1)
        })?;
    } else if let Some(data) = bytes {
        delimited(out, 7, &base64(string(data)?)?);
    }
    Some(())
}

/// A repeated KeyValue field.
fn key_values(out: &mut Vec<u8>, field: u32, list: Option<&Json>, depth: u32) -> Option<()> {
    for pair in list.map_or(Some(&Vec::new()), Json::as_array)? {
        message(out, field, |inner| {
            let [key, value] = fields(pair.as_object()?, [("key", "key"), ("value", "value")])?;
            put_str(inner, 1, key)?;
            if let Some(value) = value {
                message(inner, 2, |any| any_value(any, value, depth))?;
            }
            Some(())
        })?;
    }
    Some(())
}

fn items(list: Option<&Json>) -> Option<&[Json]> {
    list.map_or(Some(&[][..]), |list| list.as_array().map(Vec::as_slice))
}

const UINT32: (i128, i128) = (0, u32::MAX as i128);
const SPAN_KINDS: [&str; 6] = ["SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT",
                               "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER"];
const STATUS_CODES: [&str; 3] = ["STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"];

fn span(out: &mut Vec<u8>, value: &Json) -> Option<()> {
    let [trace_id, span_id, trace_state, parent, flags, name, kind, start, end, attributes, dropped_attributes,
         events, dropped_events, links, dropped_links, status] = fields(value.as_object()?, [
        ("traceId", "trace_id"), ("spanId", "span_id"), ("traceState", "trace_state"),
        ("parentSpanId", "parent_span_id"), ("flags", "flags"), ("name", "name"), ("kind", "kind"),
        ("startTimeUnixNano", "start_time_unix_nano"), ("endTimeUnixNano", "end_time_unix_nano"),
        ("attributes", "attributes"), ("droppedAttributesCount", "dropped_attributes_count"), ("events", "events"),
        ("droppedEventsCount", "dropped_events_count"), ("links", "links"), ("droppedLinksCount", "dropped_links_count"),
        ("status", "status"),
    ])?;
    if !items(links)?.is_empty() {
        return None;
    }
    // In field-number order, as protobuf writes them (a span's size is what matters; the order is upb's).
    hex_id(out, 1, trace_id)?;
    hex_id(out, 2, span_id)?;
    put_str(out, 3, trace_state)?;
    hex_id(out, 4, parent)?;
    put_str(out, 5, name)?;
    put_enum(out, 6, kind, &SPAN_KINDS)?;
    put_fixed(out, 7, start, true)?;
    put_fixed(out, 8, end, true)?;
    key_values(out, 9, attributes, 1)?;
    put_varint(out, 10, dropped_attributes, UINT32.0, UINT32.1)?;
    for event in items(events)? {
        message(out, 11, |inner| {
            let [time, name, attributes, dropped] = fields(event.as_object()?, [
                ("timeUnixNano", "time_unix_nano"), ("name", "name"), ("attributes", "attributes"),
                ("droppedAttributesCount", "dropped_attributes_count"),
            ])?;
            put_fixed(inner, 1, time, true)?;
            put_str(inner, 2, name)?;
            key_values(inner, 3, attributes, 1)?;
            put_varint(inner, 4, dropped, UINT32.0, UINT32.1)
        })?;
    }
    put_varint(out, 12, dropped_events, UINT32.0, UINT32.1)?;
    put_varint(out, 14, dropped_links, UINT32.0, UINT32.1)?;
    if let Some(status) = status {
        message(out, 15, |inner| {
            let [message_text, code] = fields(status.as_object()?, [("message", "message"), ("code", "code")])?;
            put_str(inner, 2, message_text)?;
            put_enum(inner, 3, code, &STATUS_CODES)
        })?;
    }
    put_fixed(out, 16, flags, false)
}

fn scope_spans(out: &mut Vec<u8>, value: &Json) -> Option<()> {
    let [scope, spans, schema_url] =
        fields(value.as_object()?, [("scope", "scope"), ("spans", "spans"), ("schemaUrl", "schema_url")])?;
    if let Some(scope) = scope {
        message(out, 1, |inner| {
            let [name, version, attributes, dropped] = fields(scope.as_object()?, [
                ("name", "name"), ("version", "version"), ("attributes", "attributes"),
                ("droppedAttributesCount", "dropped_attributes_count"),
            ])?;
            put_str(inner, 1, name)?;
            put_str(inner, 2, version)?;
            key_values(inner, 3, attributes, 1)?;
            put_varint(inner, 4, dropped, UINT32.0, UINT32.1)
        })?;
    }
    for item in items(spans)? {
        message(out, 2, |inner| span(inner, item))?;
    }
    put_str(out, 3, schema_url)
}

fn resource_spans(out: &mut Vec<u8>, value: &Json) -> Option<()> {
    let [resource, scopes, schema_url] = fields(value.as_object()?, [
        ("resource", "resource"), ("scopeSpans", "scope_spans"), ("schemaUrl", "schema_url"),
    ])?;
    if let Some(resource) = resource {
        message(out, 1, |inner| {
            let [attributes, dropped] = fields(resource.as_object()?, [
                ("attributes", "attributes"), ("droppedAttributesCount", "dropped_attributes_count"),
            ])?;
            key_values(inner, 1, attributes, 1)?;
            put_varint(inner, 2, dropped, UINT32.0, UINT32.1)
        })?;
    }
    for scope in items(scopes)? {
        message(out, 2, |inner| scope_spans(inner, scope))?;
    }
    put_str(out, 3, schema_url)
}

/// The protobuf bytes of an OTLP/JSON ExportTraceServiceRequest in this subset; None for anything else.
pub fn transcode(body: &[u8]) -> Option<Vec<u8>> {
    let request: Json = serde_json::from_slice(body).ok()?;
    let [resources] = fields(request.as_object()?, [("resourceSpans", "resource_spans")])?;
    let mut out = Vec::with_capacity(body.len() / 2);
    for item in items(resources)? {
        message(&mut out, 1, |inner| resource_spans(inner, item))?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_reads_padded_standard_text_only() {
        assert_eq!(base64("aGk=").unwrap(), b"hi");
        assert_eq!(base64("aGVsbG8h").unwrap(), b"hello!");
        assert_eq!(base64("").unwrap(), b"");
        assert!(base64("aGk").is_none() && base64("a-k=").is_none() && base64("a===").is_none());
    }
}
