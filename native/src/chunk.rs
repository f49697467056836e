//! A chunk as the local judge reads it (judging/chunk_analysis.py), held compactly for its cache: every distinct
//! term once in one sorted buffer, each clause its English words as ids into it and its CJK parts as text, the
//! clauses that have each term as one array of positions. A clause's sets (its terms, characters, sequence) are
//! derived again when a verdict reads the clause (the same steps as clause.rs's Analyser::clause), and the questions
//! the judge asks of the whole context (is this term anywhere, what of this claim does it support) are answered
//! here: in Python, a ~300-character Chinese chunk held ~130 kB of sets and strings, and the union of the chunks'
//! sets was a third of a warm judgment.

pub mod bindings;
mod strings;

use std::collections::HashSet;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::align::Key;
use crate::clause::{Clause, Quantity};
pub use strings::{allocated, Strings};
use strings::offset;

/// One clause of a chunk: what Analyser::clause found, less what can be derived from it again.
pub struct StoredClause {
    pub text: Box<str>,
    pub words: Box<[u16]>, // its English terms in their order, repeats kept: ids in the chunk's vocabulary
    pub parts: Box<str>,   // its CJK parts one after another
    pub part_ends: Box<[u16]>,
    pub quantities: Box<[Quantity]>,
    pub spelled: Box<[Quantity]>,
    pub names: Box<[String]>,
    pub governed: Box<[String]>,
    pub negated: bool,
    pub size: u32, // its terms and distinct quantities, for the Dice of an alignment
}

impl StoredClause {
    pub fn parts(&self) -> impl Iterator<Item = &str> {
        let mut start = 0;
        self.part_ends.iter().map(move |end| {
            let part = &self.parts[start..*end as usize];
            start = *end as usize;
            part
        })
    }

    fn heap_bytes(&self) -> usize {
        let quantities = |items: &[Quantity]| {
            allocated(std::mem::size_of_val(items))
                + items.iter().map(|(dimension, _)| allocated(dimension.capacity())).sum::<usize>()
        };
        let strings = |items: &[String]| {
            allocated(std::mem::size_of_val(items))
                + items.iter().map(|item| allocated(item.capacity())).sum::<usize>()
        };
        allocated(self.text.len()) + allocated(self.words.len() * 2) + allocated(self.parts.len())
            + allocated(self.part_ends.len() * 2) + quantities(&self.quantities) + quantities(&self.spelled)
            + strings(&self.names) + strings(&self.governed)
    }
}

/// A claim's term (CJK bigrams and one-character parts included) as Analyser::clause derives it from its parts.
pub fn part_terms<'a>(parts: impl Iterator<Item = &'a str>, mut term: impl FnMut(&str)) {
    let mut pair = String::with_capacity(8);
    for part in parts {
        let mut letters = part.chars();
        let Some(mut previous) = letters.next() else { continue };
        let mut single = true;
        for letter in letters {
            single = false;
            pair.clear();
            pair.push(previous);
            pair.push(letter);
            term(&pair);
            previous = letter;
        }
        if single {
            term(part);
        }
    }
}

/// Python's len() of a frozenset of these quantities: equal ones once (-0.0 is 0.0), a NaN never equal.
pub fn distinct_quantities(quantities: &[Quantity]) -> usize {
    let mut seen = HashSet::new();
    quantities.iter().filter(|(dimension, value)| Key::quantity(dimension.clone(), *value).is_none_or(|key| seen.insert(key))).count()
}

/// A chunk's clauses, its vocabulary and the sets the judge asks about (judging/local_judge.py's context).
pub struct Chunk {
    pub vocab: Strings, // every clause's terms
    holder_ends: Box<[u16]>,
    holders: Box<[u16]>, // the positions of the clauses that have each term, term after term
    quantity_holders: Box<[(Key, Box<[u16]>)]>,
    chars: Box<[char]>, // of every CJK part, sorted
    names: Strings,
    negated: Strings, // the terms its negated clauses negate (their governed words, else their terms)
    pub topic: Strings, // Analyser::question_terms of the chunk
    pub clauses: Box<[StoredClause]>,
    pub sentence_ends: Box<[u32]>,
}

impl Chunk {
    /// From each sentence's clauses as Analyser::clause read them, and the chunk's question terms.
    pub fn new(sentences: Vec<Vec<(String, Clause)>>, topic: FxHashSet<String>) -> Chunk {
        let sentence_ends = sentences.iter().scan(0u32, |end, sentence| {
            *end += sentence.len() as u32;
            Some(*end)
        }).collect();
        let parsed: Vec<(String, Clause)> = sentences.into_iter().flatten().collect();
        let vocab = Strings::new(parsed.iter().flat_map(|(_, c)| c.terms.iter().map(String::as_str)));
        let mut pairs: Vec<(u16, u16)> = Vec::new();
        let mut quantity_holders: Vec<(Key, Vec<u16>)> = Vec::new();
        for (position, (_, c)) in parsed.iter().enumerate() {
            let position = offset(position);
            pairs.extend(c.terms.iter().map(|term| (offset(vocab.find(term).unwrap_or(0)), position)));
            for (dimension, value) in &c.quantities {
                let Some(key) = Key::quantity(dimension.clone(), *value) else { continue };
                match quantity_holders.iter_mut().find(|(held, _)| *held == key) {
                    Some((_, found)) if found.last() == Some(&position) => {}
                    Some((_, found)) => found.push(position),
                    None => quantity_holders.push((key, vec![position])),
                }
            }
        }
        pairs.sort_unstable();
        offset(pairs.len()); // the ends below count them in 16 bits
        let mut holder_ends = vec![0u16; vocab.len()];
        for (id, _) in &pairs {
            holder_ends[*id as usize] += 1;
        }
        holder_ends.iter_mut().fold(0, |end, count| {
            *count += end;
            *count
        });
        let mut chars: Vec<char> = parsed.iter().flat_map(|(_, c)| c.chars.iter().copied()).collect();
        chars.sort_unstable();
        chars.dedup();
        let names = Strings::new(parsed.iter().flat_map(|(_, c)| c.names.iter().map(String::as_str)));
        let negated = Strings::new(parsed.iter().filter(|(_, c)| c.negated).flat_map(|(_, c)| {
            if c.governed.is_empty() { &c.terms } else { &c.governed }.iter().map(String::as_str)
        }));
        let clauses = parsed.into_iter().map(|(text, c)| stored(text, c, &vocab)).collect();
        Chunk {
            holder_ends: holder_ends.into_boxed_slice(),
            holders: pairs.into_iter().map(|(_, position)| position).collect(),
            quantity_holders: quantity_holders.into_iter().map(|(key, found)| (key, found.into_boxed_slice())).collect(),
            chars: chars.into_boxed_slice(),
            topic: Strings::new(topic.iter().map(String::as_str)),
            vocab, names, negated, clauses, sentence_ends,
        }
    }

    pub fn len(&self) -> usize {
        self.clauses.len()
    }

    /// The positions of the clauses that have this term.
    pub fn holding_term(&self, term: &str) -> &[u16] {
        self.vocab.find(term).map_or(&[], |id| self.holding_id(id))
    }

    /// The positions of the clauses that have the term of this id in the vocabulary.
    pub fn holding_id(&self, id: usize) -> &[u16] {
        let start = if id == 0 { 0 } else { self.holder_ends[id - 1] as usize };
        &self.holders[start..self.holder_ends[id] as usize]
    }

    /// The positions of the clauses that have this term or quantity.
    pub fn holding(&self, key: &Key) -> &[u16] {
        match key {
            Key::Term(term) => self.holding_term(term),
            Key::Quantity(..) => {
                self.quantity_holders.iter().find(|(held, _)| held == key).map_or(&[], |(_, found)| found)
            }
        }
    }

    pub fn has_term(&self, term: &str) -> bool {
        self.vocab.contains(term)
    }

    pub fn has_char(&self, letter: char) -> bool {
        self.chars.binary_search(&letter).is_ok()
    }

    pub fn has_name(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    pub fn negates(&self, term: &str) -> bool {
        self.negated.contains(term)
    }

    /// A clause that is not negated has the term.
    pub fn affirms(&self, term: &str) -> bool {
        self.holding_term(term).iter().any(|position| !self.clauses[*position as usize].negated)
    }

    /// Heap bytes held, every allocation as malloc sizes it.
    pub fn heap_bytes(&self) -> usize {
        self.vocab.heap_bytes() + allocated(self.holder_ends.len() * 2) + allocated(self.holders.len() * 2)
            + allocated(self.quantity_holders.len() * std::mem::size_of::<(Key, Box<[u16]>)>())
            + self.quantity_holders.iter().map(|(key, found)| {
                let dimension = match key {
                    Key::Quantity(dimension, _) | Key::Term(dimension) => dimension.capacity(),
                };
                allocated(dimension) + allocated(found.len() * 2)
            }).sum::<usize>()
            + allocated(self.chars.len() * 4) + self.names.heap_bytes() + self.negated.heap_bytes() + self.topic.heap_bytes()
            + allocated(self.clauses.len() * std::mem::size_of::<StoredClause>())
            + self.clauses.iter().map(StoredClause::heap_bytes).sum::<usize>()
            + allocated(self.sentence_ends.len() * 4)
    }
}

fn stored(text: String, c: Clause, vocab: &Strings) -> StoredClause {
    let letters = c.parts.iter().map(|part| part.chars().count()).sum::<usize>();
    let words = c.sequence[..c.sequence.len() - letters].iter().map(|word| offset(vocab.find(word).unwrap_or(0))).collect();
    let part_ends = c.parts.iter().scan(0usize, |end, part| {
        *end += part.len();
        Some(offset(*end))
    }).collect();
    let size = (c.terms.len() + distinct_quantities(&c.quantities)) as u32;
    let shrunk = |items: Vec<Quantity>| -> Box<[Quantity]> {
        items.into_iter().map(|(mut dimension, value)| {
            dimension.shrink_to_fit();
            (dimension, value)
        }).collect()
    };
    StoredClause {
        text: text.into_boxed_str(),
        words,
        parts: c.parts.concat().into_boxed_str(),
        part_ends,
        quantities: shrunk(c.quantities),
        spelled: shrunk(c.spelled),
        names: c.names.into_iter().collect(),
        governed: c.governed.into_iter().collect(),
        negated: c.negated,
        size,
    }
}

/// What of a claim's words and CJK parts these terms and characters hold: its words found as terms, and its CJK
/// characters as scorers/text.py's cjk_covered counts them (in a bigram or one-character part found: 1; only a
/// character: 0.5).
fn covered(words: &[String], parts: &[Vec<char>], has_term: impl Fn(&str) -> bool, has_char: impl Fn(char) -> bool) -> f64 {
    let mut covered = words.iter().filter(|word| has_term(word)).count() as f64;
    let mut pair = String::with_capacity(8);
    for letters in parts {
        if letters.len() == 1 {
            let mut single = [0u8; 4];
            covered += if has_term(letters[0].encode_utf8(&mut single)) { 1.0 } else if has_char(letters[0]) { 0.5 } else { 0.0 };
            continue;
        }
        let hits: Vec<bool> = letters.windows(2).map(|window| {
            pair.clear();
            pair.extend(window);
            has_term(&pair)
        }).collect();
        for (i, letter) in letters.iter().enumerate() {
            if (i > 0 && hits[i - 1]) || (i < hits.len() && hits[i]) {
                covered += 1.0;
            } else if has_char(*letter) {
                covered += 0.5;
            }
        }
    }
    covered
}

/// What of a claim's words and CJK parts the chunks hold (`covered`).
#[cfg(test)]
pub fn supported(chunks: &[&Chunk], words: &[String], parts: &[Vec<char>]) -> f64 {
    supported_with(chunks, words, parts, |term| chunks.iter().any(|chunk| chunk.has_term(term)))
}

/// What of a claim's words and CJK parts the chunks hold (`covered`), `has_term` whether a chunk has a term.
pub fn supported_with(chunks: &[&Chunk], words: &[String], parts: &[Vec<char>], has_term: impl Fn(&str) -> bool) -> f64 {
    covered(words, parts, has_term, |letter| chunks.iter().any(|chunk| chunk.has_char(letter)))
}

/// Whether a clause of this chunk has the term among its terms as Analyser::clause gave them: one of its words, a
/// bigram of one of its CJK parts or a one-character part (read from the clause as held: no set made).
pub fn clause_has(chunk: &Chunk, clause: &StoredClause, term: &str) -> bool {
    clause_has_found(clause, term, || chunk.vocab.find(term))
}

/// clause_has, the term's id in its chunk's vocabulary found by `id` (when its CJK parts do not have it).
fn clause_has_found(clause: &StoredClause, term: &str, id: impl FnOnce() -> Option<usize>) -> bool {
    let letters = term.chars().count();
    (letters <= 2 && clause.parts().any(|part| if letters == 1 { part == term } else { part.contains(term) }))
        || id().is_some_and(|id| clause.words.contains(&offset(id)))
}

/// A claim against one clause of a chunk: what of it the clause supports (scorers/text.py's supported_units(claim,
/// clause): its words and CJK parts as `covered` counts them, its quantities the clause has in digits or words, a NaN
/// equal to none and -0.0 to 0.0), how many of the claim's terms the clause lacks and how many of the clause's the claim lacks.
/// `claim_terms`: the claim's terms with their ids in the chunk's vocabulary (looked up once, for the evidence).
pub fn against(
    chunk: &Chunk, clause: &StoredClause, claim_terms: &FxHashMap<&str, Option<usize>>, words: &[String],
    parts: &[Vec<char>], quantities: &[Quantity],
) -> (f64, usize, usize) {
    let mut shared: FxHashSet<&str> = FxHashSet::with_capacity_and_hasher(claim_terms.len(), Default::default());
    shared.extend(claim_terms.iter().filter(|(term, id)| clause_has_found(clause, term, || **id)).map(|(term, _)| *term));
    let has = |term: &str| shared.contains(term) || !claim_terms.contains_key(term) && clause_has(chunk, clause, term);
    let held = quantities.iter().filter(|(dimension, value)| {
        clause.quantities.iter().chain(clause.spelled.iter()).any(|(held, held_value)| held_value == value && held == dimension)
    });
    let supported = covered(words, parts, has, |letter| clause.parts.contains(letter)) + held.count() as f64;
    // the clause's distinct terms: its Dice size less its distinct quantities
    let terms = clause.size as usize - distinct_quantities(&clause.quantities);
    (supported, claim_terms.len() - shared.len(), terms - shared.len())
}

/// A clause as Analyser::clause would give it for these English words (stems) and CJK parts, for the crate's tests.
#[cfg(test)]
pub fn test_clause(words: &[&str], parts: &[&str], quantities: Vec<Quantity>, negated: bool, governed: &[&str]) -> Clause {
    let mut terms: FxHashSet<String> = words.iter().map(|word| word.to_string()).collect();
    part_terms(parts.iter().copied(), |term| {
        terms.insert(term.to_owned());
    });
    let letters: Vec<char> = parts.iter().flat_map(|part| part.chars()).collect();
    let mut sequence: Vec<String> = words.iter().map(|word| word.to_string()).collect();
    sequence.extend(letters.iter().map(char::to_string));
    Clause {
        terms,
        words: words.iter().map(|word| word.to_string()).collect(),
        parts: parts.iter().map(|part| part.to_string()).collect(),
        chars: letters.into_iter().collect(),
        sequence,
        quantities,
        names: FxHashSet::default(),
        negated,
        governed: governed.iter().map(|word| word.to_string()).collect(),
        spelled: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(sentences: Vec<Vec<Clause>>) -> Chunk {
        let sentences = sentences.into_iter().enumerate().map(|(n, clauses)| {
            clauses.into_iter().enumerate().map(|(m, c)| (format!("clause {n}.{m}"), c)).collect()
        });
        Chunk::new(sentences.collect(), ["topic".to_string()].into_iter().collect())
    }

    #[test]
    fn a_chunk_holds_its_terms_clauses_and_what_they_negate() {
        let built = chunk(vec![
            vec![test_clause(&["return", "free"], &[], vec![("duration".into(), 43200.0)], false, &[]),
                 test_clause(&["ship", "free"], &[], vec![("count".into(), -0.0)], true, &["ship"])],
            vec![test_clause(&["refund"], &["退货免费", "无"], vec![("count".into(), f64::NAN)], true, &[])],
        ]);
        assert_eq!(built.len(), 3);
        assert_eq!(&*built.sentence_ends, [2, 3]);
        assert_eq!(built.holding_term("free"), [0, 1]);
        assert_eq!(built.holding_term("免费"), [2]);
        assert!(built.holding_term("price").is_empty());
        assert_eq!(built.holding(&Key::quantity("count".into(), 0.0).unwrap()), [1]); // -0.0 is 0.0
        assert_eq!(built.holding(&Key::quantity("duration".into(), 43200.0).unwrap()), [0]);
        assert!(built.holding(&Key::quantity("money".into(), 0.0).unwrap()).is_empty());
        assert!(built.has_term("无") && built.has_term("货免") && !built.has_term("退免"));
        assert!(built.has_char('退') && !built.has_char('价'));
        // a negated clause negates its governed words, or its terms when it governs none
        assert!(built.negates("ship") && !built.negates("free") && built.negates("refund") && built.negates("免费"));
        assert!(built.affirms("free") && !built.affirms("ship") && !built.affirms("refund"));
        assert!(built.topic.contains("topic"));
        // the clause as stored gives back its words, parts and Dice size (terms and distinct quantities, NaN counted)
        let stored = &built.clauses[2];
        assert_eq!(stored.words.iter().map(|id| built.vocab.get(*id as usize)).collect::<Vec<_>>(), ["refund"]);
        assert_eq!(stored.parts().collect::<Vec<_>>(), ["退货免费", "无"]);
        assert_eq!((built.clauses[0].size, built.clauses[1].size, stored.size), (3, 3, 6));
        assert_eq!(&*stored.text, "clause 1.0");
    }

    #[test]
    fn a_claim_is_supported_by_terms_and_cjk_characters_as_cjk_covered_counts_them() {
        let built = chunk(vec![vec![test_clause(&["return", "free"], &["退货免费", "价"], vec![], false, &[])]]);
        let chunks = [&built];
        let words = ["return".to_string(), "late".to_string()];
        assert_eq!(supported(&chunks, &words, &[]), 1.0);
        // 退货 and 货免 found: 退, 货, 免 count 1; 费 only in 免费, found too: 1; 价 a one-character part: 1
        assert_eq!(supported(&chunks, &[], &["退货免费".chars().collect(), vec!['价']]), 5.0);
        // 免退: no bigram found, both characters in the chunk: a half each; 钱 nowhere
        assert_eq!(supported(&chunks, &[], &["免退钱".chars().collect()]), 1.0);
        assert_eq!(supported(&chunks, &[], &[vec!['货']]), 0.5);
    }

    #[test]
    #[should_panic(expected = "a chunk too large for 16-bit offsets")]
    fn a_chunk_past_16_bit_offsets_is_refused() {
        let words: Vec<String> = (0..70_000).map(|n| format!("w{n}")).collect();
        Strings::new(words.iter().map(String::as_str));
    }
}
