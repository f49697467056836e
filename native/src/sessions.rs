//! ragpulse._native.SessionTable: the feedback join's sessions (feedback/join.py says what it holds and why), each
//! session's open answers and its last question, in the order they were last used, capped in sessions and bytes
//! (least recently used first out, its open answers settled unsignalled). A new turn of a session is classified against
//! the session's previous question (native/src/questions.rs, the analyses of recent questions cached here), and what
//! the join counts goes back through its `signal` and `close`. Every callback runs with no borrow of the table held: a
//! session being changed is out of the table until it goes back.
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFrozenSet, PyString, PyTuple};
use pyo3::{intern, PyTraverseError, PyVisit};
use rustc_hash::FxHashSet;

use crate::clause::bindings::TextAnalyser;
use crate::metrics::FastCounter;
use crate::questions::{turn_kind, Analysis, QuestionCache};
use crate::traces::bindings::Turn;
use crate::traces::Ordered;

struct Session {
    last_at: f64,
    question: Py<PyString>,
    question_chars: i64,
    analysis: Option<Arc<Analysis>>, // the last question's, once needed
    turns: Vec<Py<Turn>>,               // answers not yet settled, oldest first
    size: i64,
    partition: i64, // the Kafka partition of its last answer; -1: another source
    released: f64,  // the latest timestamp of its turns back from the reorder hold (epoch seconds)
}

/// The join's callbacks: signal(turn, signal); close(turn, settled) (a quiet answer is closed here: `close_turn`).
struct Back {
    signal: Py<PyAny>,
    close: Py<PyAny>,
}

#[pyclass(module = "ragpulse._native")]
pub struct SessionTable {
    sessions: Ordered<Session>,
    held: i64,
    max_sessions: usize,
    max_bytes: i64,
    entry_bytes: i64,
    max_turns: usize,
    idle: f64,
    rephrase_window: f64,
    escalation_routes: FxHashSet<String>,
    evicted_sessions: Py<FastCounter>,
    evicted_turns: Py<FastCounter>,
    analyser: Py<TextAnalyser>, // question_terms
    questions: QuestionCache,
    rephrase_similarity: f64,
    evicted_questions: Py<FastCounter>,
    kinds: Py<PyDict>, // turn kind -> FastCounter: what the join's close counts a closed answer's kind in
    counting: bool,    // false while the join replays: closed answers were counted by their previous owner
    back: Option<Back>, // None once the garbage collector cleared it
}

/// A session as the join's tests read it (`SessionTable.items()`, `table[session_id]`).
#[pyclass(frozen, get_all, module = "ragpulse._native")]
pub struct SessionView {
    last_at: f64,
    question: Py<PyString>,
    analysis: Option<Py<PyAny>>,
    turns: Py<PyTuple>,
    size: i64,
    partition: i64,
    released: f64,
}

/// An analysis as Python held it: (normalised text, terms, named things).
fn analysis_tuple(py: Python<'_>, analysis: &Analysis) -> PyResult<Py<PyAny>> {
    let terms = PyFrozenSet::new(py, &analysis.terms)?;
    let named = PyFrozenSet::new(py, &analysis.named)?;
    let text = PyString::new(py, &analysis.text).into_any();
    Ok(PyTuple::new(py, [text, terms.into_any(), named.into_any()])?.into_any().unbind())
}

/// A turn kind of turn_kind's as the interned str it is counted by: each looked up once, not once a turn.
fn kind_name<'py>(py: Python<'py>, kind: &'static str) -> Bound<'py, PyString> {
    match kind {
        "repeat" => intern!(py, "repeat").clone(),
        "follow_up" => intern!(py, "follow_up").clone(),
        "rephrase" => intern!(py, "rephrase").clone(),
        "new_topic" => intern!(py, "new_topic").clone(),
        other => PyString::intern(py, other),
    }
}

impl Session {
    fn view(&self, py: Python<'_>) -> PyResult<SessionView> {
        Ok(SessionView { last_at: self.last_at, question: self.question.clone_ref(py),
                         analysis: self.analysis.as_ref().map(|analysis| analysis_tuple(py, analysis)).transpose()?,
                         turns: PyTuple::new(py, self.turns.iter().map(|turn| turn.clone_ref(py)))?.unbind(),
                         size: self.size, partition: self.partition, released: self.released })
    }
}

impl SessionTable {
    fn back(&self, py: Python<'_>) -> Option<(Py<PyAny>, Py<PyAny>)> {
        self.back.as_ref().map(|back| (back.signal.clone_ref(py), back.close.clone_ref(py)))
    }

    /// The answer leaves its session, settled or evicted: the join's close counts it (feedback/join.py `_close`). A
    /// quiet answer, without a signal and with no silent accept to count (evicted, or a fallback), only closes and has
    /// its kind counted, which is done here as close does it: most answers, and a trip through Python each.
    fn close_turn(slf: &Bound<'_, Self>, turn: Py<Turn>, settled: bool, close: &Py<PyAny>) -> PyResult<()> {
        let py = slf.py();
        let (counting, kinds) = {
            let this = slf.borrow();
            (this.counting, this.kinds.clone_ref(py))
        };
        let (signals, fallback, kind) = {
            let held = turn.borrow(py);
            (held.signals.clone_ref(py), held.fallback, held.kind.clone_ref(py))
        };
        // No signal, and no silent accept (settled, not a fallback) to count.
        let quiet = (fallback || !settled) && !signals.bind(py).is_truthy()?;
        if !counting || (quiet && kind.is_none(py)) {
            turn.borrow_mut(py).open = false;
            return Ok(()); // replayed (closed and counted by its previous owner), or quiet with no kind to count
        }
        let counter = if quiet { kinds.bind(py).get_item(kind.bind(py))? } else { None };
        let Some(counter) = counter else { return close.call1(py, (turn, settled)).map(drop) }; // the join's _close
        turn.borrow_mut(py).open = false;
        counter.cast::<FastCounter>()?.get().add(1.0);
        Ok(())
    }

    /// What `query` is to the session's last question, neither the same text nor past the rephrase window, and its
    /// analysis (the last question's analysed first, when the session does not hold it yet, as the cache has it).
    fn classify(&mut self, py: Python<'_>, session: &Session, query: &Bound<'_, PyString>)
                -> PyResult<(&'static str, Arc<Analysis>)> {
        let analyser = self.analyser.bind(py).borrow();
        let previous = match &session.analysis {
            Some(analysis) => analysis.clone(),
            None => self.analyse(session.question.bind(py), &analyser)?,
        };
        let analysis = self.analyse(query, &analyser)?;
        Ok((turn_kind(&previous, &analysis, self.rephrase_similarity), analysis))
    }

    fn analyse(&mut self, question: &Bound<'_, PyString>, analyser: &TextAnalyser) -> PyResult<Arc<Analysis>> {
        let (analysis, evicted) = self.questions.analyse(question.to_str()?, question.len()? as i64, &analyser.analyser);
        if evicted > 0 {
            self.evicted_questions.get().add(evicted as f64);
        }
        Ok(analysis)
    }

    /// The session back in the table, as the most recent, within its caps; returns the sessions the caps evicted.
    fn store(&mut self, session_id: &str, id_chars: i64, mut session: Session) -> Vec<Session> {
        // Bounded above without walking anything: the question's characters (4 bytes each at most; again for its
        // normalised text and terms when held), a slot per term and per open turn.
        let held = session.analysis.as_ref()
            .map_or(0, |held| 8 * session.question_chars + 64 * (held.terms.len() + held.named.len()) as i64);
        session.size = self.entry_bytes + id_chars + 4 * session.question_chars + 64 * session.turns.len() as i64 + held;
        self.held += session.size;
        self.sessions.insert(session_id, session);
        let mut evicted = Vec::new();
        while self.sessions.len() > self.max_sessions || self.held > self.max_bytes {
            let Some(gone) = self.sessions.pop_first() else { break };
            self.held -= gone.size;
            self.evicted_sessions.get().add(1.0);
            evicted.push(gone);
        }
        evicted
    }

    /// A turn that is an answer (not a handoff): classified, its session's settled answers closed, then it joins them.
    #[allow(clippy::too_many_arguments)]
    fn answer(slf: &Bound<'_, Self>, popped: Option<Session>, query: &Bound<'_, PyString>, turn: &Bound<'_, Turn>,
              now: f64, signal: &Py<PyAny>, close: &Py<PyAny>) -> PyResult<Session> {
        let py = slf.py();
        let (rephrase_window, idle, max_turns) = {
            let this = slf.borrow();
            (this.rephrase_window, this.idle, this.max_turns)
        };
        let first = intern!(py, "first").clone().into_any();
        // A turn after the rephrase window, or with no open answer before it, is a first turn: the questions are
        // compared only when that is not so (a compare of two str, no Python code run, for most turns once).
        let past = |session: &Session| now - session.last_at > rephrase_window || session.turns.is_empty();
        let same = match &popped {
            Some(session) if !past(session) => PyAnyMethods::eq(session.question.bind(py).as_any(), query)?,
            _ => false,
        };
        let (mut session, kind, analysis) = match popped {
            None => (Session { last_at: now, question: query.clone().unbind(), question_chars: 0, analysis: None,
                               turns: Vec::new(), size: 0, partition: -1, released: 0.0 }, first, None),
            Some(session) if past(&session) => (session, first, None),
            Some(mut session) if same => {
                let analysis = session.analysis.take();
                (session, intern!(py, "repeat").clone().into_any(), analysis)
            }
            Some(session) => {
                let (kind, analysis) = slf.borrow_mut().classify(py, &session, query)?;
                (session, kind_name(py, kind).into_any(), Some(analysis))
            }
        };
        turn.borrow_mut().kind = kind.clone().unbind(); // counted when the answer settles, with its signals
        let name = kind.cast::<PyString>()?.to_str()?;
        if name == "repeat" || name == "rephrase" {
            if let Some(last) = session.turns.last() {
                signal.call1(py, (last.clone_ref(py), kind))?;
            }
        }
        let mut turns = std::mem::take(&mut session.turns);
        while turns.first().is_some_and(|oldest| now - oldest.borrow(py).at >= idle) {
            Self::close_turn(slf, turns.remove(0), true, close)?; // a long session: its old answers settle
        }
        if turns.len() >= max_turns {
            Self::close_turn(slf, turns.remove(0), false, close)?;
            slf.borrow().evicted_turns.get().add(1.0);
        }
        turn.borrow_mut().open = true;
        turns.push(turn.clone().unbind());
        session.turns = turns;
        session.question_chars = query.len()? as i64;
        session.question = query.clone().unbind();
        session.analysis = analysis;
        session.last_at = now;
        Ok(session)
    }
}

#[pymethods]
impl SessionTable {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (max_sessions, max_bytes, entry_bytes, max_turns, idle_seconds, rephrase_window_seconds,
                        escalation_routes, evicted_sessions, evicted_turns, analyser, question_entries, question_bytes,
                        rephrase_similarity, evicted_questions, signal, close, *, kinds))]
    fn new(max_sessions: usize, max_bytes: i64, entry_bytes: i64, max_turns: usize, idle_seconds: f64,
           rephrase_window_seconds: f64, escalation_routes: FxHashSet<String>, evicted_sessions: Py<FastCounter>,
           evicted_turns: Py<FastCounter>, analyser: Py<TextAnalyser>, question_entries: usize, question_bytes: i64,
           rephrase_similarity: f64, evicted_questions: Py<FastCounter>, signal: Py<PyAny>, close: Py<PyAny>,
           kinds: Py<PyDict>) -> Self {
        SessionTable { sessions: Ordered::default(), held: 0, max_sessions, max_bytes, entry_bytes, max_turns,
                       idle: idle_seconds, rephrase_window: rephrase_window_seconds, escalation_routes,
                       evicted_sessions, evicted_turns, analyser,
                       questions: QuestionCache::new(question_entries, question_bytes), rephrase_similarity,
                       evicted_questions, kinds, counting: true, back: Some(Back { signal, close }) }
    }

    /// Whether closed answers are counted (false while the join replays: see `close_turn`).
    #[getter]
    fn counting(&self) -> bool {
        self.counting
    }

    #[setter]
    fn set_counting(&mut self, counting: bool) {
        self.counting = counting;
    }

    /// A turn of a session: an answer to a question, or a handoff to a human (an escalation route: the escalation of
    /// the session's last answer). `timestamp`: the turn's own, when it comes back from the reorder hold.
    #[pyo3(signature = (session_id, route, query, turn, now, timestamp=None))]
    pub(crate) fn turn(slf: &Bound<'_, Self>, session_id: &Bound<'_, PyString>, route: Option<&str>, query: &Bound<'_, PyString>,
            turn: &Bound<'_, Turn>, now: f64, timestamp: Option<f64>) -> PyResult<()> {
        let py = slf.py();
        let key = session_id.to_str()?;
        let (popped, escalation, back) = {
            let mut this = slf.borrow_mut();
            let popped = this.sessions.remove(key);
            if let Some(session) = &popped {
                this.held -= session.size;
            }
            (popped, route.is_some_and(|route| this.escalation_routes.contains(route)), this.back(py))
        };
        let Some((signal, close)) = back else { return Ok(()) };
        let mut session = if escalation {
            let Some(mut session) = popped else { return Ok(()) };
            if let Some(last) = session.turns.last() {
                signal.call1(py, (last.clone_ref(py), intern!(py, "escalation")))?;
            }
            session.last_at = now;
            session
        } else {
            Self::answer(slf, popped, query, turn, now, &signal, &close)?
        };
        session.partition = turn.borrow().partition;
        if let Some(timestamp) = timestamp {
            if timestamp > session.released {
                session.released = timestamp;
            }
        }
        let evicted = slf.borrow_mut().store(key, session_id.len()? as i64, session);
        for gone in evicted {
            for held in gone.turns {
                Self::close_turn(slf, held, false, &close)?; // evicted by the caps: silence says nothing
            }
        }
        Ok(())
    }

    /// Sessions idle for `idle_seconds` at `now` end: their open answers settle.
    fn expire(slf: &Bound<'_, Self>, now: f64) -> PyResult<()> {
        let py = slf.py();
        loop {
            let (gone, close) = {
                let mut this = slf.borrow_mut();
                let idle = this.idle;
                if !this.sessions.first().is_some_and(|session| now - session.last_at >= idle) {
                    return Ok(());
                }
                let gone = this.sessions.pop_first().expect("the first session");
                this.held -= gone.size;
                (gone, this.back(py))
            };
            let Some((_, close)) = close else { return Ok(()) };
            for turn in gone.turns {
                Self::close_turn(slf, turn, true, &close)?;
            }
        }
    }

    /// The sessions of these Kafka partitions leave, uncounted (another replica owns them now); returns how many.
    fn revoke(&mut self, partitions: FxHashSet<i64>) -> usize {
        let gone: Vec<String> = self.sessions.iter()
            .filter(|(_, session)| partitions.contains(&session.partition))
            .map(|(key, _)| key.to_owned())
            .collect();
        for key in &gone {
            self.held -= self.sessions.remove(key).expect("a held session").size;
        }
        gone.len()
    }

    /// The session's last answer and the session's partition; None when it has no open answer or is unknown.
    fn last(&self, py: Python<'_>, session_id: &str) -> Option<(Py<Turn>, i64)> {
        let session = self.sessions.get(session_id)?;
        session.turns.last().map(|turn| (turn.clone_ref(py), session.partition))
    }

    /// The latest timestamp of the session's turns back from the reorder hold (None: no such session).
    pub(crate) fn released(&self, session_id: &str) -> Option<f64> {
        self.sessions.get(session_id).map(|session| session.released)
    }

    fn __len__(&self) -> usize {
        self.sessions.len()
    }

    fn __getitem__(&self, py: Python<'_>, session_id: &str) -> PyResult<SessionView> {
        match self.sessions.get(session_id) {
            Some(session) => session.view(py),
            None => Err(pyo3::exceptions::PyKeyError::new_err(session_id.to_owned())),
        }
    }

    /// (session id, session), least recently used first.
    fn items(&self, py: Python<'_>) -> PyResult<Vec<(String, SessionView)>> {
        self.sessions.iter().map(|(key, session)| Ok((key.to_owned(), session.view(py)?))).collect()
    }

    #[getter]
    fn bytes(&self) -> i64 {
        self.held
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Some(back) = &self.back {
            visit.call(&back.signal)?;
            visit.call(&back.close)?;
        }
        visit.call(&self.kinds)
    }

    fn __clear__(&mut self) {
        self.back = None;
    }
}
