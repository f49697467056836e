//! ragpulse._native.TextTable: scorers/text_cache.py's TextCache with its table in the crate, so the lexical stage
//! (native/src/lexical/stage.rs) looks a text up and moves it to the newest end without calling back into Python (the
//! table was a Python OrderedDict: a lookup and a `move_to_end` call for every chunk and question of every trace). The
//! same rules as TextCache, which stays the definition (tests/test_native_text_table.py holds the two together): made
//! once a text while it stays, least recently used out first, capped in entries and in bytes (each value's size asked
//! once, when it comes: the value is immutable), each eviction counted; with `on_repeat`, a text is kept only when
//! the doorkeeper (SeenOnce's table, by Python's hash of the text) saw it before.
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString};
use pyo3::{PyTraverseError, PyVisit};

use crate::metrics::FastCounter;
use crate::traces::Ordered;

/// scorers/text_cache.py's SeenOnce, bit for bit: two bits a text in a table of 16 bits an entry (a power of two, at
/// least 1,024 bits), cleared after `max_marks` texts marked.
struct SeenOnce {
    table: Vec<u8>,
    mask: u64,
    marks: usize,
    max_marks: usize,
}

impl SeenOnce {
    fn new(max_entries: usize) -> Self {
        let wanted = 16 * max_entries as i64 - 1; // Python's int: -1 when max_entries is 0
        let length = 64 - wanted.unsigned_abs().leading_zeros();
        let bits = 1u64 << length.max(10);
        SeenOnce { table: vec![0; (bits / 8) as usize], mask: bits - 1, marks: 0, max_marks: max_entries }
    }

    /// Whether the text of Python hash `key` was marked before; marks it.
    fn repeat(&mut self, key: isize) -> bool {
        let key = key as i64;
        let (first, second) = ((key as u64) & self.mask, ((key >> 32) as u64) & self.mask);
        let bit = |table: &[u8], at: u64| table[(at >> 3) as usize] >> (at & 7) & 1 == 1;
        if bit(&self.table, first) && bit(&self.table, second) {
            return true;
        }
        if self.marks == self.max_marks {
            self.table.fill(0);
            self.marks = 0;
        }
        self.table[(first >> 3) as usize] |= 1 << (first & 7);
        self.table[(second >> 3) as usize] |= 1 << (second & 7);
        self.marks += 1;
        false
    }
}

#[pyclass(subclass, module = "ragpulse._native")]
pub struct TextTable {
    items: Ordered<(Py<PyAny>, i64)>, // text -> (value, its size), least recently used first
    make: Option<Py<PyAny>>,          // None once the garbage collector cleared it
    size: Option<Py<PyAny>>,
    max_entries: usize,
    max_bytes: i64,
    evicted: Py<FastCounter>,
    bytes: i64,
    seen: Option<SeenOnce>,
}

impl TextTable {
    /// The value held for `text`, moved to the newest end (None: not held).
    fn hit(&mut self, py: Python<'_>, text: &str) -> Option<Py<PyAny>> {
        self.items.touch(text).map(|(value, _)| value.clone_ref(py))
    }

    /// `value`, made for `text`, held; the least recently used out while past a cap (the new one too, if alone it is).
    fn hold(&mut self, text: &str, value: Py<PyAny>, size: i64) {
        self.bytes += size;
        self.items.insert(text, (value, size));
        while self.items.len() > self.max_entries || self.bytes > self.max_bytes {
            let Some((_, size)) = self.items.pop_first() else { break };
            self.bytes -= size;
            self.evicted.get().add(1.0);
        }
    }

    fn callbacks(&self, py: Python<'_>) -> PyResult<(Py<PyAny>, Py<PyAny>)> {
        match (&self.make, &self.size) {
            (Some(make), Some(size)) => Ok((make.clone_ref(py), size.clone_ref(py))),
            _ => Err(pyo3::exceptions::PyRuntimeError::new_err("the table's make and size were cleared")),
        }
    }

    /// TextCache.get: the value held for `text`, else made (and held unless the doorkeeper first sees it). The table
    /// is not borrowed while Python makes or sizes a value.
    pub fn get(table: &Bound<'_, TextTable>, text: &Bound<'_, PyString>) -> PyResult<Py<PyAny>> {
        let py = table.py();
        let mut encoded = None;
        let Some(content) = content(text, &mut encoded) else {
            // Not UTF-8 (a lone surrogate): made, as the maker takes it, never held.
            return table.borrow().callbacks(py)?.0.call1(py, (text,));
        };
        let (make, size, keep) = {
            let mut this = table.borrow_mut();
            if let Some(found) = this.hit(py, content) {
                return Ok(found);
            }
            let keep = match this.seen.as_mut() {
                Some(seen) => seen.repeat(text.hash()?),
                None => true,
            };
            let (make, size) = this.callbacks(py)?;
            (make, size, keep)
        };
        let value = make.call1(py, (text,))?;
        if keep {
            let bytes: i64 = size.call1(py, (text, &value))?.extract(py)?;
            table.borrow_mut().hold(content, value.clone_ref(py), bytes);
        }
        Ok(value)
    }
}

/// The text's UTF-8, without leaving a UTF-8 copy on a non-ASCII string (`to_str` would: it would count in the
/// string's `sys.getsizeof`, which the scorer's size of a cached text reads, and live as long as the string does).
/// A non-ASCII text is read from its encoding, held in `encoded` (not copied again). None: a lone surrogate, which
/// UTF-8 cannot spell.
fn content<'a, 'py>(text: &'a Bound<'py, PyString>, encoded: &'a mut Option<Bound<'py, PyBytes>>) -> Option<&'a str> {
    // SAFETY: `text` is a live str object; the flag is read from its header.
    if unsafe { pyo3::ffi::PyUnicode_IS_ASCII(text.as_ptr()) } != 0 {
        return text.to_str().ok();
    }
    let bytes = encoded.insert(text.encode_utf8().ok()?);
    std::str::from_utf8(bytes.as_bytes()).ok()
}

#[pymethods]
impl TextTable {
    #[new]
    #[pyo3(signature = (make, size, *, max_entries, max_bytes, evicted, on_repeat = false))]
    fn new(make: Py<PyAny>, size: Py<PyAny>, max_entries: usize, max_bytes: i64, evicted: Py<FastCounter>,
           on_repeat: bool) -> Self {
        TextTable { items: Ordered::default(), make: Some(make), size: Some(size), max_entries, max_bytes, evicted,
                    bytes: 0, seen: on_repeat.then(|| SeenOnce::new(max_entries)) }
    }

    #[pyo3(name = "get")]
    fn get_of(slf: &Bound<'_, Self>, text: &Bound<'_, PyString>) -> PyResult<Py<PyAny>> {
        TextTable::get(slf, text)
    }

    fn __len__(&self) -> usize {
        self.items.len()
    }

    /// What the values held count, by their sizes.
    #[getter]
    fn bytes(&self) -> i64 {
        self.bytes
    }

    /// The texts held, least recently used first.
    #[getter]
    fn items<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.items.iter().map(|(text, _)| text))
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        for (_, (value, _)) in self.items.iter() {
            visit.call(value)?;
        }
        for callback in [&self.make, &self.size].into_iter().flatten() {
            visit.call(callback)?;
        }
        visit.call(&self.evicted)
    }

    fn __clear__(&mut self) {
        self.make = None;
        self.size = None;
        self.items = Ordered::default();
    }
}
