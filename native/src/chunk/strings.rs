//! A chunk's string tables (distinct strings in one sorted buffer, a small filter in front of its binary search)
//! and the bytes the chunk cache is charged for an allocation.

use std::hash::BuildHasher;

/// The bytes glibc's malloc takes for a block of `bytes` (its header, 16-byte steps, 32 at least): what an
/// allocation holds, for the cache's count.
pub fn allocated(bytes: usize) -> usize {
    if bytes == 0 { 0 } else { (bytes + 8 + 15).max(32) & !15 }
}

/// An offset, an id or a position within a chunk: 16 bits, since judging/chunk_analysis.py cuts a chunk at 4,000
/// characters (at most ~8,000 terms, ~28,000 bytes of them); a larger one is refused (the bindings raise the panic as
/// ValueError).
pub(super) fn offset(value: usize) -> u16 {
    u16::try_from(value).expect("a chunk too large for 16-bit offsets")
}

/// Distinct strings in one buffer, sorted (by bytes): a set that a binary search reads, an id each; a filter of two
/// bits a string (of about eight per string) spares the search most strings it lacks (a claim's terms looked up in a
/// chunk about something else: most of a Chinese claim's lookups, ~15% of its check).
#[derive(Default)]
pub struct Strings {
    text: Box<str>,
    ends: Box<[u16]>,
    filter: Box<[u64]>,
}

/// The filter's two bits of a string, in a filter of `bits` bits (a power of two).
#[inline]
fn filter_bits(item: &str, bits: usize) -> [usize; 2] {
    let hash = rustc_hash::FxBuildHasher.hash_one(item.as_bytes());
    let mask = bits as u64 - 1;
    [(hash & mask) as usize, ((hash >> 32) & mask) as usize]
}

/// str's order (bytewise), compared inline for short items: a vocabulary's terms are mostly a CJK bigram (6 bytes) or
/// an English stem, and a call of the C library's memcmp for each step of a binary search cost more than the bytes.
#[inline]
fn compare(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let shared = a.len().min(b.len());
    if shared > 16 {
        return a.cmp(b);
    }
    for i in 0..shared {
        if a[i] != b[i] {
            return a[i].cmp(&b[i]);
        }
    }
    a.len().cmp(&b.len())
}

impl Strings {
    pub fn new<'a>(items: impl IntoIterator<Item = &'a str>) -> Strings {
        let mut sorted: Vec<&str> = items.into_iter().collect();
        sorted.sort_unstable();
        sorted.dedup();
        let mut text = String::with_capacity(sorted.iter().map(|item| item.len()).sum());
        let mut ends = Vec::with_capacity(sorted.len());
        for item in sorted {
            text.push_str(item);
            ends.push(offset(text.len()));
        }
        let mut filter = vec![0u64; (ends.len() * 8).next_power_of_two().max(64) / 64];
        let bits = filter.len() * 64;
        for id in 0..ends.len() {
            let start = if id == 0 { 0 } else { ends[id - 1] as usize };
            for bit in filter_bits(&text[start..ends[id] as usize], bits) {
                filter[bit / 64] |= 1 << (bit % 64);
            }
        }
        Strings { text: text.into_boxed_str(), ends: ends.into_boxed_slice(), filter: filter.into_boxed_slice() }
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn get(&self, id: usize) -> &str {
        let start = if id == 0 { 0 } else { self.ends[id - 1] as usize };
        let end = self.ends[id] as usize;
        // SAFETY: every end is the end of an item pushed whole (new() above): within the text and at a character
        // boundary, and a start is the end before it (the binary search of a Chinese claim's terms checked both).
        unsafe { self.text.get_unchecked(start..end) }
    }

    pub fn find(&self, item: &str) -> Option<usize> {
        if self.filter.is_empty()
            || filter_bits(item, self.filter.len() * 64).iter().any(|bit| self.filter[bit / 64] & (1 << (bit % 64)) == 0) {
            return None;
        }
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let middle = (low + high) / 2;
            match compare(self.get(middle).as_bytes(), item.as_bytes()) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Some(middle),
            }
        }
        None
    }

    pub fn contains(&self, item: &str) -> bool {
        self.find(item).is_some()
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.len()).map(|id| self.get(id))
    }

    pub(super) fn heap_bytes(&self) -> usize {
        allocated(self.text.len()) + allocated(self.ends.len() * 2) + allocated(self.filter.len() * 8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_sorted_distinct_and_found_by_id() {
        let strings = Strings::new(["pear", "apple", "pear", "fig", ""]);
        assert_eq!(strings.iter().collect::<Vec<_>>(), ["", "apple", "fig", "pear"]);
        assert_eq!((strings.find("fig"), strings.find("figs"), strings.find("")), (Some(2), None, Some(0)));
        // the filter: every string found, of 64 bits at least (eight a string)
        let many: Vec<String> = (0..500).map(|n| format!("t{n}")).collect();
        let filtered = Strings::new(many.iter().map(String::as_str));
        assert!(many.iter().all(|item| filtered.get(filtered.find(item).unwrap()) == item));
        assert!((0..500).all(|n| filtered.find(&format!("u{n}")).is_none()));
        assert_eq!((filtered.filter.len(), Strings::new(["a"]).filter.len()), (64, 1));
        assert_eq!(strings.get(3), "pear");
        assert!(!Strings::default().contains("fig"));
    }

    #[test]
    fn allocations_are_counted_as_glibc_sizes_them() {
        assert_eq!([0, 1, 24, 25, 40, 41].map(allocated), [0, 32, 32, 48, 48, 64]);
    }
}
