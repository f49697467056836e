//! The local judge's alignment of a claim with the chunks' clauses (judging/local_judge.py): the Dice of the
//! claim's terms and quantities with each clause's, counted over an index of a chunk's clauses by key. In
//! Python this counting was most of a judgment on recurring chunks (a dict hit per shared key and clause).

pub mod bindings;

use rustc_hash::FxHashMap;

/// A term, or a quantity as Python's dict tells quantities apart: -0.0 is 0.0, and NaN equals nothing.
#[derive(Hash, PartialEq, Eq)]
pub enum Key {
    Term(String),
    Quantity(String, u64),
}

impl Key {
    /// None for NaN: Python finds no NaN quantity again (another clause's NaN is another object).
    pub fn quantity(dimension: String, value: f64) -> Option<Key> {
        if value.is_nan() {
            return None;
        }
        Some(Key::Quantity(dimension, if value == 0.0 { 0.0f64.to_bits() } else { value.to_bits() }))
    }
}

/// A chunk's clauses by key, and each clause's size (its terms and quantities).
pub struct ClauseIndex {
    positions: FxHashMap<Key, Vec<u32>>,
    sizes: Vec<u32>,
}

/// The best aligned clause (the first of equals), its Dice, and every clause within `margin` of it.
#[derive(Debug, PartialEq)]
pub struct Alignment {
    pub dice: f64,
    pub best: usize,
    pub near: Vec<usize>,
}

impl ClauseIndex {
    /// From each clause's keys and size (NaN quantities have no key but count in the size).
    pub fn new(clauses: Vec<(Vec<Key>, u32)>) -> ClauseIndex {
        let mut positions: FxHashMap<Key, Vec<u32>> = FxHashMap::default();
        let mut sizes = Vec::with_capacity(clauses.len());
        for (position, (keys, size)) in clauses.into_iter().enumerate() {
            sizes.push(size);
            for key in keys {
                positions.entry(key).or_default().push(position as u32);
            }
        }
        ClauseIndex { positions, sizes }
    }

    pub fn positions(&self, key: &Key) -> &[u32] {
        self.positions.get(key).map_or(&[], |found| found.as_slice())
    }

    pub fn len(&self) -> usize {
        self.sizes.len()
    }

    /// Heap bytes held, an upper estimate (for the judge's cache cap).
    pub fn heap_bytes(&self) -> usize {
        let entry = std::mem::size_of::<(Key, Vec<u32>)>() + 8; // and a control byte, rounded up
        self.positions.capacity() * entry
            + self.positions.iter().map(|(key, found)| {
                let text = match key {
                    Key::Term(term) => term.capacity(),
                    Key::Quantity(dimension, _) => dimension.capacity(),
                };
                text + found.capacity() * 4
            }).sum::<usize>()
            + self.sizes.capacity() * 4
    }
}

/// The claim's keys against the chunks' indexes, each at its offset among all the clauses: Dice
/// 2n / (claim_size + clause size) for the n keys shared. None when no clause shares a key.
pub fn align(keys: &[Key], claim_size: usize, located: &[(usize, &ClauseIndex)], margin: f64) -> Option<Alignment> {
    let total = located.iter().map(|(offset, index)| offset + index.len()).max().unwrap_or(0);
    let mut shared = vec![0u32; total];
    let mut sizes = vec![0u32; total];
    for (offset, index) in located {
        sizes[*offset..offset + index.len()].copy_from_slice(&index.sizes);
        for key in keys {
            for position in index.positions(key) {
                shared[offset + *position as usize] += 1;
            }
        }
    }
    let dice = |position: usize| 2.0 * shared[position] as f64 / (claim_size + sizes[position] as usize) as f64;
    let mut best: Option<(f64, usize)> = None;
    for position in (0..total).filter(|&position| shared[position] > 0) {
        let score = dice(position);
        if best.is_none_or(|(top, _)| score > top) {
            best = Some((score, position));
        }
    }
    let (top, best) = best?;
    let near = (0..total).filter(|&position| shared[position] > 0 && dice(position) >= top - margin).collect();
    Some(Alignment { dice: top, best, near })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(text: &str) -> Key {
        Key::Term(text.to_string())
    }

    #[test]
    fn the_first_of_equal_clauses_is_best_and_near_ones_are_kept() {
        // clause 0: {a, b}; clause 1: {a, b, c}; clause 2: {a}
        let first = ClauseIndex::new(vec![(vec![term("a"), term("b")], 2), (vec![term("a"), term("b"), term("c")], 3)]);
        let second = ClauseIndex::new(vec![(vec![term("a")], 1), (vec![term("a"), term("b")], 2)]);
        let found = align(&[term("a"), term("b")], 2, &[(0, &first), (2, &second)], 0.1).unwrap();
        assert_eq!(found, Alignment { dice: 1.0, best: 0, near: vec![0, 3] });
        let found = align(&[term("a"), term("b")], 2, &[(0, &first), (2, &second)], 0.25).unwrap();
        assert_eq!(found.near, vec![0, 1, 3]); // 0.8 is within 0.25 of 1.0; {a} against {a, b} is 2/3
        assert_eq!(align(&[term("z")], 1, &[(0, &first)], 0.1), None);
    }

    #[test]
    fn quantities_match_as_python_dict_keys_do() {
        let index = ClauseIndex::new(vec![(vec![Key::quantity("count".into(), -0.0).unwrap()], 1)]);
        assert_eq!(index.positions(&Key::quantity("count".into(), 0.0).unwrap()), &[0]);
        assert!(Key::quantity("count".into(), f64::NAN).is_none());
        assert!(index.positions(&Key::quantity("money".into(), 0.0).unwrap()).is_empty());
    }
}
