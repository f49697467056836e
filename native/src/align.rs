//! The local judge's alignment of a claim with the chunks' clauses (judging/local_judge.py): the Dice of the
//! claim's terms and quantities with each clause's, counted over each chunk's clauses by key (native/src/chunk.rs).
//! In Python this counting was most of a judgment on recurring chunks (a dict hit per shared key and clause).
//! tests/test_native_align.py holds it to the Python it replaced.

use crate::chunk::Chunk;

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

/// The best aligned clause (the first of equals), its Dice, and every clause within `margin` of it.
#[derive(Debug, PartialEq)]
pub struct Alignment {
    pub dice: f64,
    pub best: usize,
    pub near: Vec<usize>,
}

/// The claim's keys against the chunks' clauses, numbered on from one chunk to the next: Dice
/// 2n / (claim_size + clause size) for the n keys shared. None when no clause shares a key.
#[cfg(test)]
pub fn align(keys: &[Key], claim_size: usize, chunks: &[&Chunk], margin: f64) -> Option<Alignment> {
    align_by(keys.len(), claim_size, chunks, margin, |key, chunk| chunks[chunk].holding(&keys[key]))
}

/// The alignment of `keys` keys, `holding(key, chunk)` the positions in that chunk of the clauses that have it.
pub fn align_by<'c>(
    keys: usize, claim_size: usize, chunks: &[&'c Chunk], margin: f64, holding: impl Fn(usize, usize) -> &'c [u16],
) -> Option<Alignment> {
    let total = chunks.iter().map(|chunk| chunk.len()).sum();
    let mut shared = vec![0u32; total];
    let mut sizes = Vec::with_capacity(total);
    for (index, chunk) in chunks.iter().enumerate() {
        let offset = sizes.len();
        sizes.extend(chunk.clauses.iter().map(|clause| clause.size));
        for key in 0..keys {
            for position in holding(key, index) {
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
    use crate::chunk::test_clause;

    fn term(text: &str) -> Key {
        Key::Term(text.to_string())
    }

    fn chunk(clauses: &[&[&str]]) -> Chunk {
        let parsed = clauses.iter().map(|words| ("c".to_string(), test_clause(words, &[], vec![], false, &[]))).collect();
        Chunk::new(vec![parsed], Default::default())
    }

    #[test]
    fn the_first_of_equal_clauses_is_best_and_near_ones_are_kept() {
        // positions 0: {a, b}; 1: {a, b, c}; then the second chunk's 2: {a}; 3: {a, b}
        let (first, second) = (chunk(&[&["a", "b"], &["a", "b", "c"]]), chunk(&[&["a"], &["a", "b"]]));
        let found = align(&[term("a"), term("b")], 2, &[&first, &second], 0.1).unwrap();
        assert_eq!(found, Alignment { dice: 1.0, best: 0, near: vec![0, 3] });
        let found = align(&[term("a"), term("b")], 2, &[&first, &second], 0.25).unwrap();
        assert_eq!(found.near, vec![0, 1, 3]); // 0.8 is within 0.25 of 1.0; {a} against {a, b} is 2/3
        assert_eq!(align(&[term("z")], 1, &[&first], 0.1), None);
        assert_eq!(align(&[], 0, &[], 0.1), None);
    }

    #[test]
    fn quantities_align_as_python_dict_keys_match() {
        let with_zero = test_clause(&["fee"], &[], vec![("count".into(), -0.0), ("count".into(), f64::NAN)], false, &[]);
        let built = Chunk::new(vec![vec![("c".to_string(), with_zero)]], Default::default());
        assert!(Key::quantity("count".into(), f64::NAN).is_none());
        // the claim {fee, 0}: both shared, against the clause's size 3 (fee, 0.0 and the NaN, never equal to another)
        let found = align(&[term("fee"), Key::quantity("count".into(), 0.0).unwrap()], 2, &[&built], 0.1).unwrap();
        assert_eq!(found, Alignment { dice: 0.8, best: 0, near: vec![0] });
        assert_eq!(align(&[Key::quantity("money".into(), 0.0).unwrap()], 1, &[&built], 0.1), None);
    }
}
