//! The protobuf wire format: fields read one by one over borrowed bytes, nesting held to upb's limit. Its hot
//! functions are `#[inline]`: the message parsers that call them are in another module (codegen unit), and a
//! request decodes 5% slower without (tests/helpers/otlp_payload's batches).

/// upb's default message nesting limit (the request itself is at depth 1).
const MAX_DEPTH: u32 = 100;

#[derive(Debug)]
pub struct DecodeError(pub String);

pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    /// The message's nesting depth: unknown groups inside it count from there.
    depth: u32,
}

pub enum Field<'a> {
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
    #[inline]
    pub fn new(data: &'a [u8], depth: u32) -> Self {
        Reader { data, pos: 0, depth }
    }

    #[inline]
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

    #[inline]
    fn take(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.checked_add(len).filter(|&end| end <= self.data.len());
        let Some(end) = end else { return error("truncated message") };
        let out = &self.data[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    /// The next field's number and value; None at the end of the message.
    #[inline]
    pub fn next(&mut self) -> Result<Option<(u64, Field<'a>)>, DecodeError> {
        if self.pos >= self.data.len() {
            return Ok(None);
        }
        let (number, wire_type) = self.tag()?;
        if wire_type == 4 {
            return error("end of a group that was not started");
        }
        Ok(Some((number, self.value(number, wire_type, self.depth)?)))
    }

    #[inline]
    fn tag(&mut self) -> Result<(u64, u64), DecodeError> {
        let tag = self.varint()?;
        let number = tag >> 3;
        if number == 0 || number > MAX_FIELD_NUMBER {
            return error("invalid field number");
        }
        Ok((number, tag & 7))
    }

    #[inline]
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

#[inline]
pub fn deeper(depth: u32) -> Result<u32, DecodeError> {
    if depth >= MAX_DEPTH {
        return error("message nested past the depth limit (100)");
    }
    Ok(depth + 1)
}
