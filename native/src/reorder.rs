//! The feedback join's reorder hold (feedback/reorder.py says why): a session's turns, and feedback addressed to the
//! session while turns of it are held, wait `seconds` from their arrival for earlier turns still on their way, then go
//! back in the order of their timestamps (arrival order for equal ones), with everything of their session that sorts
//! before them. Bounded in entries and bytes: past either, the oldest entry goes back at once (counted `full`).
//!
//! Entries arrive with consecutive sequence numbers and leave the arrival queue from its front only, so an entry still
//! in a session's list is found in the queue by its number alone, and a session's list holds (timestamp, number).
pub mod bindings;

use std::collections::VecDeque;

use rustc_hash::{FxHashMap, FxHashSet};

/// An entry besides its text's characters (4 bytes each at most): the entry, its arguments back to the join, a list
/// and a queue slot (feedback/reorder.py counted the same).
pub const ENTRY_BYTES: i64 = 300;

/// Which of the join's callbacks an entry goes back through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Turn,
    Feedback,
}

struct Entry<T> {
    seq: u64,
    session: String,
    partition: i64,
    size: i64,
    deadline: f64,
    kind: Kind,
    back: Option<T>, // None once it went back: its deadline may come later, it holds nothing then
}

/// A session's held entries, in (timestamp, arrival) order, and when the session came into the hold (its place in a
/// flush, as a Python dict's order of insertion gave it).
struct Session {
    since: u64,
    held: Vec<(f64, u64)>,
}

/// What went back, in order, and how many were put ahead of an entry that arrived before them.
pub struct Released<T> {
    pub back: Vec<(Kind, T)>,
    pub reordered: u64,
    pub full: u64,
}

impl<T> Default for Released<T> {
    fn default() -> Self {
        Released { back: Vec::new(), reordered: 0, full: 0 }
    }
}

pub struct Hold<T> {
    seconds: f64,
    max_entries: i64,
    max_bytes: i64,
    sessions: FxHashMap<String, Session>,
    arrivals: VecDeque<Entry<T>>, // their deadlines come in this order
    seq: u64,
    pub entries: i64,
    pub bytes: i64,
}

impl<T> Hold<T> {
    pub fn new(seconds: f64, max_entries: i64, max_bytes: i64) -> Self {
        Hold { seconds, max_entries, max_bytes, sessions: FxHashMap::default(), arrivals: VecDeque::new(), seq: 0,
               entries: 0, bytes: 0 }
    }

    pub fn holds(&self, session: &str) -> bool {
        self.sessions.contains_key(session)
    }

    /// The timestamp of the session's last held entry (what an entry without one of its own sorts at).
    pub fn last_key(&self, session: &str) -> Option<f64> {
        self.sessions.get(session).and_then(|held| held.held.last()).map(|(key, _)| *key)
    }

    /// An entry of `chars` characters, sorted at `key` in its session, back through `kind` with `back`.
    #[allow(clippy::too_many_arguments)]
    pub fn add(&mut self, session: &str, key: f64, partition: i64, chars: i64, now: f64, kind: Kind, back: T,
               out: &mut Released<T>) {
        self.seq += 1;
        let seq = self.seq;
        let size = ENTRY_BYTES + 4 * chars;
        match self.sessions.get_mut(session) {
            None => {
                self.sessions.insert(session.to_owned(), Session { since: seq, held: vec![(key, seq)] });
            }
            Some(held) => {
                let held = &mut held.held;
                let mut at = held.len();
                while at > 0 && held[at - 1].0 > key {
                    at -= 1; // sessions hold few entries, and most come in order
                }
                held.insert(at, (key, seq));
            }
        }
        self.arrivals.push_back(Entry { seq, session: session.to_owned(), partition, size, deadline: now + self.seconds,
                                        kind, back: Some(back) });
        self.entries += 1;
        self.bytes += size;
        while self.entries > self.max_entries || self.bytes > self.max_bytes {
            let Some(oldest) = self.arrivals.pop_front() else { break };
            if oldest.back.is_some() {
                out.full += self.through(oldest, out);
            }
        }
    }

    /// Every entry whose hold is over goes back, with what sorts before it in its session.
    pub fn expire(&mut self, now: f64, out: &mut Released<T>) {
        while self.arrivals.front().is_some_and(|entry| entry.deadline <= now) {
            let entry = self.arrivals.pop_front().expect("a front entry");
            if entry.back.is_some() {
                self.through(entry, out);
            }
        }
    }

    /// The sessions whose first held entry came from one of `partitions` go back whole, in the order they came in.
    pub fn flush(&mut self, partitions: &FxHashSet<i64>, out: &mut Released<T>) {
        let mut going: Vec<(u64, u64)> = self.sessions.values()
            .filter(|held| partitions.contains(&self.entry(held.held[0].1).partition))
            .map(|held| (held.since, held.held[held.held.len() - 1].1))
            .collect();
        going.sort_unstable();
        for (_, last) in going {
            let session = self.entry(last).session.clone();
            self.release_through(&session, last, out);
        }
    }

    fn index(&self, seq: u64) -> usize {
        (seq - self.arrivals[0].seq) as usize
    }

    fn entry(&self, seq: u64) -> &Entry<T> {
        &self.arrivals[self.index(seq)]
    }

    /// Releases `entry` (out of the arrival queue now) and every entry of its session before it; returns how many.
    fn through(&mut self, mut entry: Entry<T>, out: &mut Released<T>) -> u64 {
        let back = entry.back.take().expect("an entry still held");
        let (kind, size) = (entry.kind, entry.size);
        let count = self.release_through(&entry.session, entry.seq, out);
        self.entries -= 1;
        self.bytes -= size;
        out.back.push((kind, back));
        count
    }

    /// The session's entries up to the one numbered `last` go back (that one too when it is still in the queue);
    /// returns how many of the session's entries left, that one included.
    fn release_through(&mut self, session: &str, last: u64, out: &mut Released<T>) -> u64 {
        let held = self.sessions.get_mut(session).expect("the entry's session");
        let at = held.held.iter().position(|(_, seq)| *seq == last).expect("the entry in its session") + 1;
        let going: Vec<(f64, u64)> = held.held.drain(..at).collect();
        if held.held.is_empty() {
            self.sessions.remove(session);
        }
        let mut earliest = last;
        for (_, before) in going[..at - 1].iter().rev() {
            if *before > earliest {
                out.reordered += 1; // classified ahead of an entry that arrived before it
            }
            earliest = earliest.min(*before);
        }
        let front = self.arrivals.front().map_or(u64::MAX, |first| first.seq);
        for (_, seq) in going {
            if seq < front || seq - front >= self.arrivals.len() as u64 {
                continue; // the last one itself, out of the queue already (through())
            }
            let index = (seq - front) as usize;
            let released = &mut self.arrivals[index];
            let back = released.back.take().expect("a held entry");
            self.entries -= 1;
            self.bytes -= released.size;
            out.back.push((released.kind, back));
        }
        at as u64
    }
}
