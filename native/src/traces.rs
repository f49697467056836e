//! The feedback join's trace table (feedback/join.py says what it holds and why): the answers it holds by trace id, in
//! the order they came (a trace sent again goes to the back, as the newest), and the tombstones of the ids that left
//! the window (feedback about one of them is late). The table's caps, its bytes and what it gives the judge sampler
//! are in the bindings, which hold the answers as Python objects.
pub mod bindings;

use std::collections::VecDeque;
use std::hash::BuildHasher;

use rustc_hash::{FxBuildHasher, FxHashMap, FxHashSet};

/// Values by key in the order they were put there: put again, a key goes to the back. The queue holds (number, key);
/// a key taken out or put again leaves its old slot behind, skipped when it comes to the front and swept when stale
/// slots outnumber live ones (so the queue stays within twice the table).
pub struct Ordered<T> {
    map: FxHashMap<String, (u64, T)>,
    order: VecDeque<(u64, String)>,
    seq: u64,
}

impl<T> Default for Ordered<T> {
    fn default() -> Self {
        Ordered { map: FxHashMap::default(), order: VecDeque::new(), seq: 0 }
    }
}

impl<T> Ordered<T> {
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn get(&self, key: &str) -> Option<&T> {
        self.map.get(key).map(|(_, value)| value)
    }

    /// `value` at the back; returns what the key held before.
    pub fn insert(&mut self, key: &str, value: T) -> Option<T> {
        self.seq += 1;
        let previous = self.map.insert(key.to_owned(), (self.seq, value)).map(|(_, value)| value);
        self.order.push_back((self.seq, key.to_owned()));
        if previous.is_some() {
            self.sweep();
        }
        previous
    }

    pub fn remove(&mut self, key: &str) -> Option<T> {
        let removed = self.map.remove(key).map(|(_, value)| value);
        if removed.is_some() {
            self.sweep();
        }
        removed
    }

    /// The oldest value.
    pub fn first(&mut self) -> Option<&T> {
        self.trim();
        let (_, key) = self.order.front()?;
        self.get(key)
    }

    pub fn pop_first(&mut self) -> Option<T> {
        self.trim();
        let (_, key) = self.order.pop_front()?;
        self.map.remove(&key).map(|(_, value)| value)
    }

    /// Keys and values, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &T)> {
        self.order.iter().filter_map(|(seq, key)| match self.map.get(key) {
            Some((live, value)) if live == seq => Some((key.as_str(), value)),
            _ => None,
        })
    }

    fn live(&self, seq: u64, key: &str) -> bool {
        self.map.get(key).is_some_and(|(live, _)| *live == seq)
    }

    fn trim(&mut self) {
        while self.order.front().is_some_and(|(seq, key)| !self.live(*seq, key)) {
            self.order.pop_front();
        }
    }

    fn sweep(&mut self) {
        if self.order.len() > 2 * self.map.len() + 16 {
            let map = &self.map;
            self.order.retain(|(seq, key)| map.get(key).is_some_and(|(live, _)| live == seq));
        }
    }
}

/// The last `cap` ids buried, by a 64-bit hash of each (as the Python join kept `hash(trace_id)`): an id buried again
/// keeps its place.
pub struct Tombstones {
    held: FxHashSet<u64>,
    order: VecDeque<u64>,
    cap: usize,
}

impl Tombstones {
    pub fn new(cap: usize) -> Self {
        Tombstones { held: FxHashSet::default(), order: VecDeque::new(), cap }
    }

    pub fn bury(&mut self, key: &str) {
        let hash = FxBuildHasher.hash_one(key);
        if self.held.insert(hash) {
            self.order.push_back(hash);
        }
        while self.order.len() > self.cap {
            let oldest = self.order.pop_front().expect("a tombstone");
            self.held.remove(&oldest);
        }
    }

    pub fn holds(&self, key: &str) -> bool {
        self.held.contains(&FxBuildHasher.hash_one(key))
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }
}

#[cfg(test)]
mod tests {
    use super::{Ordered, Tombstones};

    #[test]
    fn a_key_put_again_goes_to_the_back_and_stale_slots_stay_bounded() {
        let mut table = Ordered::default();
        for round in 0..1000 {
            table.insert("a", round);
            table.insert("b", round);
        }
        assert_eq!(table.iter().collect::<Vec<_>>(), vec![("a", &999), ("b", &999)]);
        assert!(table.order.len() <= 2 * table.len() + 17);
        table.insert("a", 0);
        assert_eq!(table.pop_first(), Some(999));
        assert_eq!(table.first(), Some(&0));
        assert_eq!(table.remove("a"), Some(0));
        assert_eq!((table.len(), table.pop_first()), (0, None));
    }

    #[test]
    fn tombstones_keep_the_last_ones_buried() {
        let mut tombs = Tombstones::new(2);
        for key in ["a", "b", "a", "c"] {
            tombs.bury(key);
        }
        assert_eq!((tombs.holds("a"), tombs.holds("b"), tombs.holds("c"), tombs.len()), (false, true, true, 2));
    }
}
