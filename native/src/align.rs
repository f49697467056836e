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
pub fn align(keys: &[Key], claim_size: usize, chunks: &[&Chunk], margin: f64) -> Option<Alignment> {
    let total = chunks.iter().map(|chunk| chunk.len()).sum();
    let mut shared = vec![0u32; total];
    let mut sizes = Vec::with_capacity(total);
    for chunk in chunks {
        let offset = sizes.len();
        sizes.extend(chunk.clauses.iter().map(|clause| clause.size));
        for key in keys {
            for position in chunk.holding(key) {
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

