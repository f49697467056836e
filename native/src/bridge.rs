//! What every binding shares at the Python boundary: a str's text read without leaving a copy on the str, and a
//! panic in the crate raised as ValueError instead of unwinding into the interpreter.
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyString;

/// A str's text, read without leaving a UTF-8 copy on it: CPython keeps the UTF-8 that a read as &str makes on every
/// non-ASCII str for as long as the str lives, and the texts read here are held on (queues, the join, the caches: a
/// Chinese chunk 5 bytes a character instead of 2, and not what their byte caps count). ASCII is read in place (its
/// UTF-8 is its own data); the rest is encoded into a bytes object of its own, dropped after the call.
pub fn with_text<T>(text: &Bound<'_, PyString>, read: impl FnOnce(&str) -> PyResult<T>) -> PyResult<T> {
    // SAFETY: `text` is a live str, held by its Bound; the macro reads its state flags.
    if unsafe { pyo3::ffi::PyUnicode_IS_ASCII(text.as_ptr()) } != 0 {
        return read(text.to_str()?);
    }
    let mut short = [0u8; 4 * SHORT];
    if let Some(encoded) = encoded_short(text, &mut short) {
        return read(encoded);
    }
    let encoded = text.encode_utf8()?; // a lone surrogate raises UnicodeEncodeError, as to_str() did
    // SAFETY: CPython's strict UTF-8 encoder made these bytes: valid UTF-8 (checking again cost 3% of a Chinese
    // answer's scoring).
    read(unsafe { std::str::from_utf8_unchecked(encoded.as_bytes()) })
}

/// Up to this many characters, a str is encoded here into a buffer on the stack: a term, a CJK character or a
/// clause (a Chinese claim's bigrams were each a bytes object made and dropped: a tenth of a Chinese judgment's
/// calls into the crate).
const SHORT: usize = 64;

/// A short str's UTF-8, written from its code points into `buffer`; None for a longer one, one not ready or one with
/// a lone surrogate (the encoder raises for it).
fn encoded_short<'b>(text: &Bound<'_, PyString>, buffer: &'b mut [u8; 4 * SHORT]) -> Option<&'b str> {
    use pyo3::ffi::{PyUnicode_1BYTE_KIND, PyUnicode_2BYTE_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH, PyUnicode_IS_READY, PyUnicode_KIND};
    let raw = text.as_ptr();
    // SAFETY: a live str (held by its Bound): its state flags, and its length once it is ready.
    if unsafe { PyUnicode_IS_READY(raw) } == 0 || unsafe { PyUnicode_GET_LENGTH(raw) } as usize > SHORT {
        return None;
    }
    // SAFETY: a ready str's data holds its length of code points, each of its kind's width.
    let (kind, data, length) = unsafe { (PyUnicode_KIND(raw), PyUnicode_DATA(raw), PyUnicode_GET_LENGTH(raw) as usize) };
    let mut used = 0;
    for index in 0..length {
        // SAFETY: index < length, read at the kind's width
        let code = unsafe {
            if kind == PyUnicode_1BYTE_KIND {
                u32::from(*data.cast::<u8>().add(index))
            } else if kind == PyUnicode_2BYTE_KIND {
                u32::from(*data.cast::<u16>().add(index))
            } else {
                *data.cast::<u32>().add(index)
            }
        };
        used += char::from_u32(code)?.encode_utf8(&mut buffer[used..]).len();
    }
    // SAFETY: whole characters, each encoded by encode_utf8
    Some(unsafe { std::str::from_utf8_unchecked(&buffer[..used]) })
}

/// A str of this text: ASCII read by CPython's UTF-8 reader (its ASCII path), anything else made from its code points
/// (decoding UTF-8 was a sixth of a Chinese clause's analysis, most of its strs one or two characters).
pub fn new_str<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyString>> {
    if text.is_ascii() {
        return Ok(PyString::new(py, text));
    }
    let mut short = [0u32; 16];
    let mut long = Vec::new();
    let count = text.chars().count();
    let points: &[u32] = if count <= short.len() {
        short.iter_mut().zip(text.chars()).for_each(|(slot, letter)| *slot = u32::from(letter));
        &short[..count]
    } else {
        long.extend(text.chars().map(u32::from));
        &long
    };
    // SAFETY: `count` code points of a str, each a Unicode scalar value, which CPython copies into a new str.
    let made = unsafe {
        pyo3::ffi::PyUnicode_FromKindAndData(pyo3::ffi::PyUnicode_4BYTE_KIND as std::ffi::c_int, points.as_ptr().cast(),
                                             count as pyo3::ffi::Py_ssize_t)
    };
    // SAFETY: a new reference, or null with an exception set
    let made = unsafe { Bound::from_owned_ptr_or_err(py, made) }?;
    made.cast_into::<PyString>().map_err(|_| PyValueError::new_err("PyUnicode_FromKindAndData made no str"))
}

/// The slice `start:stop`, to cut a str or a view of a bytes. Not PyO3's `PySlice::new` (0.30), which leaks its
/// bounds: PySlice_New takes references of its own to its arguments, and the ints made for them are never released.
/// Cutting every line of an NDJSON body with it kept two ints a line for good (7 MB a minute at 1,800 traces a second,
/// none of it counted: docs/benchmarks-log.md, the soak's leak).
pub fn slice(py: Python<'_>, start: usize, stop: usize) -> PyResult<Bound<'_, PyAny>> {
    let (start, stop) = (start.into_pyobject(py)?, stop.into_pyobject(py)?);
    // SAFETY: live ints held here until the call returns; PySlice_New takes its own references to them (and to None,
    // the step) and returns a new reference, or null with an exception set.
    unsafe { Bound::from_owned_ptr_or_err(py, pyo3::ffi::PySlice_New(start.as_ptr(), stop.as_ptr(), pyo3::ffi::Py_None())) }
}

pub fn guarded<T>(work: impl FnOnce() -> T) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
        .map_err(|_| PyValueError::new_err("the native text analysis failed (a defect: please report it)"))
}
