//! The feedback join's trace table (feedback/join.py says what it holds and why): the answers it holds by trace id, in
//! the order they came (a trace sent again goes to the back, as the newest), and the tombstones of the ids that left
//! the window (feedback about one of them is late). The table's caps, its bytes and what it gives the judge sampler
//! are in the bindings, which hold the answers as Python objects.
pub mod bindings;

use std::collections::VecDeque;
use std::hash::BuildHasher;
use std::sync::Arc;

use rustc_hash::{FxBuildHasher, FxHashMap, FxHashSet};

/// Values by key in the order they were put there: put again, a key goes to the back. A list linked through a slab
/// of nodes: moving a key to the back, taking one out and the oldest are each one hash lookup, the key held once (a
/// queue of (number, key) with stale slots swept now and then cost two copies of each key, a second lookup for every
/// slot that came to the front and a sweep of the queue every table's length of turns).
pub struct Ordered<T> {
    map: FxHashMap<Arc<str>, usize>,
    nodes: Vec<Option<Node<T>>>,
    free: Vec<usize>, // slots of `nodes` left by keys taken out
    head: usize,      // the oldest; NIL when empty
    tail: usize,
}

const NIL: usize = usize::MAX;

struct Node<T> {
    key: Arc<str>,
    value: T,
    prev: usize,
    next: usize,
}

impl<T> Default for Ordered<T> {
    fn default() -> Self {
        Ordered { map: FxHashMap::default(), nodes: Vec::new(), free: Vec::new(), head: NIL, tail: NIL }
    }
}

impl<T> Ordered<T> {
    pub fn len(&self) -> usize {
        self.map.len()
    }

    fn node(&self, at: usize) -> &Node<T> {
        self.nodes[at].as_ref().expect("a linked node")
    }

    fn node_mut(&mut self, at: usize) -> &mut Node<T> {
        self.nodes[at].as_mut().expect("a linked node")
    }

    pub fn get(&self, key: &str) -> Option<&T> {
        self.map.get(key).map(|&at| &self.node(at).value)
    }

    /// The key's value, moved to the back (None: not held).
    pub fn touch(&mut self, key: &str) -> Option<&T> {
        let at = *self.map.get(key)?;
        self.unlink(at);
        self.link_back(at);
        Some(&self.node(at).value)
    }

    /// `value` at the back; returns what the key held before.
    pub fn insert(&mut self, key: &str, value: T) -> Option<T> {
        if let Some(&at) = self.map.get(key) {
            self.unlink(at);
            self.link_back(at);
            return Some(std::mem::replace(&mut self.node_mut(at).value, value));
        }
        let key: Arc<str> = Arc::from(key);
        let node = Node { key: Arc::clone(&key), value, prev: NIL, next: NIL };
        let at = match self.free.pop() {
            Some(at) => {
                self.nodes[at] = Some(node);
                at
            }
            None => {
                self.nodes.push(Some(node));
                self.nodes.len() - 1
            }
        };
        self.map.insert(key, at);
        self.link_back(at);
        None
    }

    pub fn remove(&mut self, key: &str) -> Option<T> {
        let at = self.map.remove(key)?;
        Some(self.take(at).value)
    }

    /// The oldest value.
    pub fn first(&self) -> Option<&T> {
        (self.head != NIL).then(|| &self.node(self.head).value)
    }

    pub fn pop_first(&mut self) -> Option<T> {
        if self.head == NIL {
            return None;
        }
        let node = self.take(self.head);
        self.map.remove(&node.key);
        Some(node.value)
    }

    /// Keys and values, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &T)> {
        let mut at = self.head;
        std::iter::from_fn(move || {
            let node = self.nodes.get(at)?.as_ref()?;
            at = node.next;
            Some((&*node.key, &node.value))
        })
    }

    /// The node at `at` out of the list and its slot free.
    fn take(&mut self, at: usize) -> Node<T> {
        self.unlink(at);
        self.free.push(at);
        self.nodes[at].take().expect("a linked node")
    }

    fn unlink(&mut self, at: usize) {
        let (prev, next) = {
            let node = self.node(at);
            (node.prev, node.next)
        };
        if prev == NIL { self.head = next } else { self.node_mut(prev).next = next }
        if next == NIL { self.tail = prev } else { self.node_mut(next).prev = prev }
    }

    fn link_back(&mut self, at: usize) {
        let tail = self.tail;
        {
            let node = self.node_mut(at);
            node.prev = tail;
            node.next = NIL;
        }
        if tail == NIL { self.head = at } else { self.node_mut(tail).next = at }
        self.tail = at;
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
    fn a_key_put_again_goes_to_the_back_and_keeps_its_node() {
        let mut table = Ordered::default();
        for round in 0..1000 {
            table.insert("a", round);
            table.insert("b", round);
        }
        assert_eq!(table.iter().collect::<Vec<_>>(), vec![("a", &999), ("b", &999)]);
        assert_eq!(table.nodes.len(), 2); // a key put again keeps its node
        table.insert("a", 0);
        assert_eq!(table.pop_first(), Some(999));
        assert_eq!(table.first(), Some(&0));
        assert_eq!(table.remove("a"), Some(0));
        assert_eq!((table.len(), table.pop_first()), (0, None));
    }

    /// Against a list of (key, value) in order, the definition: 20,000 operations drawn on eight keys (put, touched,
    /// taken out, the oldest popped).
    #[test]
    fn it_is_a_list_in_the_order_keys_were_put() {
        let (mut table, mut model): (Ordered<u32>, Vec<(String, u32)>) = (Ordered::default(), Vec::new());
        let mut state: u64 = 7;
        for step in 0..20_000u32 {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let key = format!("k{}", (state >> 33) % 8);
            let at = model.iter().position(|(held, _)| *held == key);
            match (state >> 40) % 5 {
                0 | 1 => {
                    let before = at.map(|at| model.remove(at).1);
                    model.push((key.clone(), step));
                    assert_eq!(table.insert(&key, step), before);
                }
                2 => assert_eq!(table.remove(&key), at.map(|at| model.remove(at).1)),
                3 => {
                    let touched = at.map(|at| model.remove(at));
                    model.extend(touched.clone());
                    assert_eq!(table.touch(&key), touched.as_ref().map(|(_, value)| value));
                }
                _ => assert_eq!(table.pop_first(), (!model.is_empty()).then(|| model.remove(0).1)),
            }
            assert_eq!(table.first(), model.first().map(|(_, value)| value));
            assert_eq!(table.get(&key), model.iter().find(|(held, _)| *held == key).map(|(_, value)| value));
            let listed: Vec<(&str, &u32)> = model.iter().map(|(key, value)| (key.as_str(), value)).collect();
            assert_eq!((table.iter().collect::<Vec<_>>(), table.len()), (listed, model.len()));
        }
        assert!(table.nodes.len() <= 8);
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
