//! A field of a msgspec struct (or of a class with `__slots__`) read and written at its slot. The crate reads the
//! same few fields of every event; each getattr searched the type's dictionaries and called the member descriptor,
//! which was most of an NDJSON line's own cost in the crate besides msgspec's decode. Only an object of exactly the
//! type the field was found on is read at the slot (the slot's offset is that type's); any other object, and a slot
//! left empty, goes through getattr and setattr as before.
use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyType};

pub struct Field {
    owner: Py<PyType>,
    name: Py<PyString>,
    offset: ffi::Py_ssize_t,
}

impl Field {
    /// The field `name` of `owner`: a member descriptor of the type's own that holds any object and may be set, on a
    /// type that sets its attributes as `object` does (no `__setattr__` of its own: a frozen dataclass has one) or a
    /// msgspec struct that is not frozen. An error for anything else.
    pub fn of(owner: &Bound<'_, PyType>, name: &str) -> PyResult<Field> {
        let py = owner.py();
        let own = owner.getattr(intern!(py, "__dict__"))?;
        let frozen = match owner.getattr(intern!(py, "__struct_config__")) {
            Ok(config) => config.getattr(intern!(py, "frozen"))?.is_truthy()?,
            Err(_) => false,
        };
        let descriptor = own.get_item(name)?;
        // SAFETY: the object is read as a member descriptor only once its type is checked to be exactly that.
        let member = unsafe {
            (ffi::Py_TYPE(descriptor.as_ptr()) == std::ptr::addr_of_mut!(ffi::PyMemberDescr_Type))
                .then(|| &*(*descriptor.as_ptr().cast::<ffi::PyMemberDescrObject>()).d_member)
        };
        match member {
            Some(member) if member.type_code == ffi::Py_T_OBJECT_EX && member.flags & ffi::Py_READONLY == 0
                && !frozen && !own.contains(intern!(py, "__setattr__"))? => {
                Ok(Field { owner: owner.clone().unbind(), name: PyString::new(py, name).unbind(), offset: member.offset })
            }
            _ => Err(PyTypeError::new_err(format!("{name} is no settable object slot of {owner}"))),
        }
    }

    /// Where `object` holds the field, when it is exactly of the owner type.
    fn slot(&self, object: &Bound<'_, PyAny>) -> Option<*mut *mut ffi::PyObject> {
        // SAFETY: an instance of the owner type (exactly) holds the member at this offset, as its descriptor says.
        object.get_type().is(self.owner.bind(object.py()))
            .then(|| unsafe { object.as_ptr().cast::<u8>().offset(self.offset).cast::<*mut ffi::PyObject>() })
    }

    /// `object.<name>`.
    pub fn get<'py>(&self, object: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = object.py();
        if let Some(slot) = self.slot(object) {
            // SAFETY: the slot is the object's (above); what it holds is borrowed, and a new reference made of it.
            let value = unsafe { *slot };
            if !value.is_null() {
                return Ok(unsafe { Bound::from_borrowed_ptr(py, value) });
            }
        }
        object.getattr(self.name.bind(py)) // raises as Python does for an empty slot
    }

    /// `object.<name> = value`. At the slot only for a value the garbage collector never tracks (a number, a str,
    /// None): setting a tracked one on a msgspec struct the collector does not track starts tracking it, which
    /// setattr does.
    pub fn set(&self, object: &Bound<'_, PyAny>, value: Bound<'_, PyAny>) -> PyResult<()> {
        // SAFETY: PyObject_IS_GC reads the value's type flags only.
        if unsafe { ffi::PyObject_IS_GC(value.as_ptr()) } == 0 {
            if let Some(slot) = self.slot(object) {
                // SAFETY: the slot is the object's (above): it takes the new reference, and the old one is let go after.
                unsafe {
                    let old = std::mem::replace(&mut *slot, value.into_ptr());
                    ffi::Py_XDECREF(old);
                }
                return Ok(());
            }
        }
        object.setattr(self.name.bind(object.py()), value)
    }

    pub fn traverse(&self, visit: &pyo3::PyVisit<'_>) -> Result<(), pyo3::PyTraverseError> {
        visit.call(&self.owner)
    }
}
