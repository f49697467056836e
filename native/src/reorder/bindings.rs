//! ragpulse._native.ReorderHold: the hold's Python face, as feedback/join.py drives it. An entry's arguments back to
//! the join are a tuple kept as it is; they go back through `on_turn(*args)` or `on_feedback(*args)` after the hold's
//! own state is updated (a callback may ask the hold again), and its counters are the join's FastCounter children.
//! When `on_turn` is a session table's `turn` (the join's), a turn goes back to it directly: the same call, without a
//! trip through Python's call machinery and the method's argument parsing for every turn.
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};
use rustc_hash::FxHashSet;

use super::{Hold, Kind, Released};
use crate::metrics::FastCounter;
use crate::sessions::SessionTable;
use crate::traces::bindings::Turn;

#[pyclass(module = "ragpulse._native")]
pub struct ReorderHold {
    hold: Hold<Py<PyTuple>>,
    back: Option<(Py<PyAny>, Py<PyAny>)>, // on_turn, on_feedback; None once the garbage collector cleared them
    sessions: Option<Py<SessionTable>>,   // on_turn's table when on_turn is a SessionTable's turn (cleared with back)
    reordered: Py<FastCounter>,
    late: Py<FastCounter>,
    full: Py<FastCounter>,
}

impl ReorderHold {
    /// The hold's state changes under `change`, then what went back goes back, in order.
    fn releasing(slf: &Bound<'_, Self>, change: impl FnOnce(&mut Hold<Py<PyTuple>>, &mut Released<Py<PyTuple>>))
                 -> PyResult<()> {
        let mut out = Released::default();
        let back = {
            let mut this = slf.borrow_mut();
            change(&mut this.hold, &mut out);
            if out.reordered > 0 {
                this.reordered.get().add(out.reordered as f64);
            }
            if out.full > 0 {
                this.full.get().add(out.full as f64);
            }
            let sessions = this.sessions.as_ref().map(|sessions| sessions.clone_ref(slf.py()));
            this.back.as_ref().map(|(turn, feedback)| (turn.clone_ref(slf.py()), feedback.clone_ref(slf.py()), sessions))
        };
        let Some((on_turn, on_feedback, sessions)) = back else { return Ok(()) };
        for (kind, args) in out.back {
            match (kind, &sessions) {
                (Kind::Turn, Some(sessions)) => to_sessions(sessions.bind(slf.py()), args.bind(slf.py()))?,
                (Kind::Turn, None) => { on_turn.call1(slf.py(), args.bind(slf.py()))?; }
                (Kind::Feedback, _) => { on_feedback.call1(slf.py(), args.bind(slf.py()))?; }
            }
        }
        Ok(())
    }

    fn last_key(&self, session_id: &str) -> PyResult<f64> {
        self.hold.last_key(session_id).ok_or_else(|| PyKeyError::new_err(session_id.to_owned()))
    }
}

#[pymethods]
impl ReorderHold {
    #[new]
    #[allow(clippy::too_many_arguments)]
    fn new(seconds: f64, max_entries: i64, max_bytes: i64, on_turn: Py<PyAny>, on_feedback: Py<PyAny>,
           reordered: Py<FastCounter>, late: Py<FastCounter>, full: Py<FastCounter>, py: Python<'_>) -> PyResult<Self> {
        let sessions = sessions_of(on_turn.bind(py))?;
        Ok(ReorderHold { hold: Hold::new(seconds, max_entries, max_bytes), back: Some((on_turn, on_feedback)), sessions,
                         reordered, late, full })
    }

    pub(crate) fn holds(&self, session_id: &str) -> bool {
        self.hold.holds(session_id)
    }

    /// A turn of the session (a question of `chars` characters), asked at `timestamp` (None only while turns of the
    /// session are held: it goes after them, in arrival order).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn turn(slf: &Bound<'_, Self>, session_id: &str, timestamp: Option<f64>, partition: i64, chars: i64, now: f64,
            args: Py<PyTuple>) -> PyResult<()> {
        let key = match timestamp {
            Some(key) => key,
            None => slf.borrow().last_key(session_id)?,
        };
        Self::releasing(slf, |hold, out| hold.add(session_id, key, partition, chars, now, Kind::Turn, args, out))
    }

    /// A turn came after a later turn of its session went back: the join classifies it where it lands.
    pub(crate) fn late(&self) {
        self.late.get().add(1.0);
    }

    /// Feedback on the session's last answer while turns of it are held: it goes after them.
    fn feedback(slf: &Bound<'_, Self>, session_id: &str, partition: i64, chars: i64, now: f64, args: Py<PyTuple>)
                -> PyResult<()> {
        let key = slf.borrow().last_key(session_id)?;
        Self::releasing(slf, |hold, out| hold.add(session_id, key, partition, chars, now, Kind::Feedback, args, out))
    }

    fn expire(slf: &Bound<'_, Self>, now: f64) -> PyResult<()> {
        Self::releasing(slf, |hold, out| hold.expire(now, out))
    }

    /// The sessions of these Kafka partitions go back whole, now (they leave this replica, or were replayed).
    fn flush(slf: &Bound<'_, Self>, partitions: FxHashSet<i64>) -> PyResult<()> {
        Self::releasing(slf, |hold, out| hold.flush(&partitions, out))
    }

    #[getter]
    fn entries(&self) -> i64 {
        self.hold.entries
    }

    #[getter]
    fn bytes(&self) -> i64 {
        self.hold.bytes
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Some((on_turn, on_feedback)) = &self.back {
            visit.call(on_turn)?;
            visit.call(on_feedback)?;
        }
        if let Some(sessions) = &self.sessions {
            visit.call(sessions)?;
        }
        Ok(())
    }

    fn __clear__(&mut self) {
        self.back = None;
        self.sessions = None;
    }
}

/// The session table whose `turn` method `on_turn` is, if it is one.
fn sessions_of(on_turn: &Bound<'_, PyAny>) -> PyResult<Option<Py<SessionTable>>> {
    let py = on_turn.py();
    let Ok(table) = on_turn.getattr(pyo3::intern!(py, "__self__")) else { return Ok(None) };
    let Ok(table) = table.cast_into::<SessionTable>() else { return Ok(None) };
    let name = on_turn.getattr(pyo3::intern!(py, "__name__"))?;
    Ok((name.cast::<PyString>()?.to_str()? == "turn").then(|| table.unbind()))
}

/// What the join hands the hold for a turn (native/src/join.rs): session id, route, query, turn, now, timestamp.
type TurnArgs<'py> = (Bound<'py, PyString>, Option<Bound<'py, PyString>>, Bound<'py, PyString>, Bound<'py, Turn>, f64,
                      Option<f64>);

/// A turn back to the session table: `SessionTable.turn(*args)`.
fn to_sessions(sessions: &Bound<'_, SessionTable>, args: &Bound<'_, PyTuple>) -> PyResult<()> {
    let (session_id, route, query, turn, now, timestamp): TurnArgs<'_> = args.extract()?;
    let route = route.as_ref().map(|route| route.to_str()).transpose()?;
    SessionTable::turn(sessions, &session_id, route, &query, &turn, now, timestamp)
}
