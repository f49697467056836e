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
    let encoded = text.encode_utf8()?; // a lone surrogate raises UnicodeEncodeError, as to_str() did
    // SAFETY: CPython's strict UTF-8 encoder made these bytes: valid UTF-8 (checking again cost 3% of a Chinese
    // answer's scoring).
    read(unsafe { std::str::from_utf8_unchecked(encoded.as_bytes()) })
}

pub fn guarded<T>(work: impl FnOnce() -> T) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
        .map_err(|_| PyValueError::new_err("the native text analysis failed (a defect: please report it)"))
}
