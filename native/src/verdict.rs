//! The local judge's verdict rules that read the chunks (judging/local_judge.py, _verdict): a claim's quantities the
//! context lacks, the contradictions found before the swap (a quantity's rival in the aligned clause, a quantity given
//! to the wrong subject, the opposite polarity, a term only negated) and the names the context lacks. Python keeps the
//! rules that read a claim's shares alone, the swap (judging/substitution.py) and the reasons' wording; the tables
//! (the demonym endings, the thresholds) are Python's, handed over once (VerdictRules).
pub mod bindings;

use rustc_hash::FxHashSet;

use crate::chunk::{clause_has, Chunk, StoredClause};
use crate::clause::Quantity;

/// The thresholds and word lists of judging/local_judge.py that these rules read.
pub struct Rules {
    pub demonym_endings: Vec<String>,
    pub aligned_at_least: f64,
    pub too_short_units: usize,
    pub places: FxHashSet<String>, // the places a Chinese clause names (scorers/cjk_places.py)
}

/// A claim as the rules read it: its terms, its distinct quantities (a NaN one included), its names, the stems of its
/// capitalised words (given when a rule may read them), its polarity and the words its negation governs, its size.
pub struct Claim<'a> {
    pub terms: FxHashSet<&'a str>,
    pub quantities: &'a [Quantity],
    pub names: &'a [String],
    pub opening: Option<&'a [String]>,
    pub negated: bool,
    pub governed: &'a [String],
    pub units: usize,
}

/// The claim's alignment as ChunkContext.evidence counted it: its best clause, those within the margin of it, what
/// that clause supports and how many of the claim's terms it lacks.
pub struct Aligned<'a> {
    pub best: usize,
    pub near: &'a [usize],
    pub supported: f64,
    pub claim_only: usize,
}

/// A contradiction found before the swap, as the rule (judge_features.Rule) and what its reason names.
pub enum Contradiction {
    Quantity(Quantity, Vec<Quantity>),
    Subject(Quantity, Vec<Quantity>),
    Polarity,
    NegatedTerm(Box<str>),
    /// The subject rule reads the claim's capitalised words' stems, not given: ask again with them.
    Opening,
}

/// The context's chunks with their clauses numbered on from one chunk to the next.
pub struct Context<'c> {
    pub chunks: Vec<&'c Chunk>,
}

impl<'c> Context<'c> {
    fn at(&self, mut position: usize) -> Option<(&'c Chunk, &'c StoredClause)> {
        for chunk in &self.chunks {
            if position < chunk.len() {
                return Some((chunk, &chunk.clauses[position]));
            }
            position -= chunk.len();
        }
        None
    }

    fn holds(&self, quantity: &Quantity, spelled: bool) -> bool {
        // -0.0 == 0.0 and a NaN equals nothing, as Python's tuples compare two quantities made apart
        self.chunks.iter().flat_map(|chunk| chunk.clauses.iter())
            .flat_map(|c| if spelled { &c.spelled } else { &c.quantities }.iter())
            .any(|(dimension, value)| *value == quantity.1 && *dimension == quantity.0)
    }

    /// The claim's quantities that no clause has, as a quantity or a count in words, in order.
    pub fn missing_quantities(&self, quantities: &[Quantity]) -> Vec<Quantity> {
        sorted(quantities.iter().filter(|q| !self.holds(q, false) && !self.holds(q, true)).cloned().collect())
    }

    /// Each sentence's clauses, chunk after chunk.
    fn statements(&self) -> impl Iterator<Item = (&'c Chunk, &'c [StoredClause])> + '_ {
        self.chunks.iter().flat_map(|chunk| {
            let mut start = 0;
            chunk.sentence_ends.iter().map(move |end| {
                let statement = &chunk.clauses[start..*end as usize];
                start = *end as usize;
                (*chunk, statement)
            })
        })
    }

    /// The positions' clauses, chunk after chunk, that have this term.
    fn holding<'t>(&'t self, term: &'t str) -> impl Iterator<Item = (&'c Chunk, &'c StoredClause)> + 't {
        self.chunks.iter().flat_map(move |chunk| {
            chunk.holding_term(term).iter().map(move |position| (*chunk, &chunk.clauses[*position as usize]))
        })
    }

    fn has_term(&self, term: &str) -> bool {
        self.chunks.iter().any(|chunk| chunk.has_term(term))
    }
}

/// Python's sorted() of distinct quantities: by dimension, then value.
fn sorted(mut quantities: Vec<Quantity>) -> Vec<Quantity> {
    quantities.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.partial_cmp(&b.1).unwrap_or(std::cmp::Ordering::Equal)));
    quantities
}

/// A clause's quantities as a frozenset holds them (the first of equals), in order.
fn distinct(quantities: &[Quantity]) -> Vec<Quantity> {
    let mut kept: Vec<Quantity> = Vec::with_capacity(quantities.len());
    for quantity in quantities {
        if !kept.iter().any(|(dimension, value)| value == &quantity.1 && dimension == &quantity.0) {
            kept.push(quantity.clone());
        }
    }
    sorted(kept)
}

/// A quantity's dimension, years apart from other counts: 1874 rivals 1865, not a 27-year-old.
fn kind(quantity: &Quantity) -> (&str, bool) {
    let (dimension, value) = quantity;
    (dimension, dimension == "count" && (1000.0..=2100.0).contains(value) && value.fract() == 0.0)
}

/// The contradiction of the rules that run before the swap, the first that holds (judge_features.Rule's order).
pub fn contradiction(rules: &Rules, context: &Context, claim: &Claim, missing: &[Quantity], aligned: Option<&Aligned>)
                     -> Option<Contradiction> {
    let best = aligned.map(|a| context.at(a.best).expect("the alignment's best clause is the context's"));
    let rivals_of = |quantity: &Quantity, same: &dyn Fn(&Quantity, &Quantity) -> bool| -> Vec<Quantity> {
        best.map_or_else(Vec::new, |(_, c)| distinct(&c.quantities).into_iter().filter(|q| same(q, quantity)).collect())
    };
    for quantity in missing {
        let rivals = rivals_of(quantity, &|q, quantity| q.0 == quantity.0);
        if !rivals.is_empty() {
            return Some(Contradiction::Quantity(quantity.clone(), rivals));
        }
    }
    let claim_only = aligned.map_or(claim.terms.len(), |a| a.claim_only);
    match wrong_subject(context, claim, best, claim_only, &|quantity| rivals_of(quantity, &|q, quantity| kind(q) == kind(quantity))) {
        Some(Ok((quantity, rivals))) => return Some(Contradiction::Subject(quantity, rivals)),
        Some(Err(())) => return Some(Contradiction::Opening),
        None => {}
    }
    let (aligned, (chunk, clause)) = (aligned?, best?);
    if aligned.supported / claim.units as f64 >= rules.aligned_at_least {
        if aligned.near.iter().all(|p| context.at(*p).is_some_and(|(chunk, other)| opposed(claim, chunk, other))) {
            return Some(Contradiction::Polarity);
        }
        // a term the aligned clause lacks, found only where the context negates it; a negated claim is checked above
        let mut only: Vec<&str> = if claim.negated { Vec::new() } else {
            // the few negated terms first: most terms are negated nowhere, the aligned clause's lookup spared
            claim.terms.iter().copied().filter(|term| {
                context.chunks.iter().any(|chunk| chunk.negates(term)) && !clause_has(chunk, clause, term)
                    && !context.chunks.iter().any(|chunk| chunk.affirms(term))
            }).collect()
        };
        only.sort_unstable();
        for term in only {
            let mut holders = context.holding(term).peekable();
            let first = holders.peek().map(|(_, c)| c.text.clone());
            let shares = |(chunk, c): (&Chunk, &StoredClause)| {
                let terms = c.size as usize - crate::chunk::distinct_quantities(&c.quantities);
                claim.terms.iter().filter(|t| clause_has(chunk, c, t)).count() * 2 >= terms
            };
            // and what it negates is said of the claim's subject: "Accidental damage is not covered by the standard
            // warranty" says nothing of a warranty covering manufacturing defects (its subject, outside the negation,
            // is no term of the claim); a clause whose negation governs nothing named negates all of it
            let same_subject = |(chunk, c): (&Chunk, &StoredClause)| c.governed.is_empty() || c.words.iter().all(|id| {
                let term = chunk.vocab.get(usize::from(*id));
                c.governed.iter().any(|governed| governed == term) || claim.terms.contains(term)
            });
            if holders.all(|holder| shares(holder) && same_subject(holder)) {
                // holders are never none: the term is only negated, so a clause has it
                return first.map(Contradiction::NegatedTerm);
            }
        }
    }
    None
}

/// Opposite polarity about the same thing (judging/local_judge.py says when): the claim against a clause.
fn opposed(claim: &Claim, chunk: &Chunk, other: &StoredClause) -> bool {
    if claim.negated == other.negated {
        return false;
    }
    if claim.negated {
        governs(claim.governed, |term| clause_has(chunk, other, term), &other.governed)
    } else {
        governs(&other.governed, |term| claim.terms.contains(term), claim.governed)
    }
}

/// The negation governs words the positive clause says (at least half of them), not all of which it negates too; a
/// negation that governs nothing named negates the whole clause (Chinese).
fn governs(governed: &[String], positive_has: impl Fn(&str) -> bool, positive_governed: &[String]) -> bool {
    if governed.is_empty() {
        return true;
    }
    let said: Vec<&String> = governed.iter().filter(|term| positive_has(term)).collect();
    2 * said.len() >= governed.len() && said.iter().any(|term| !positive_governed.contains(term))
}

/// A quantity the context has, given to the wrong subject: "Dartmouth was founded in 1636" where the clause about
/// Dartmouth says 1769 and 1636 is only ever said without Dartmouth (of Harvard). Err: it needs the claim's opening
/// names, not given.
fn wrong_subject(context: &Context, claim: &Claim, best: Option<(&Chunk, &StoredClause)>, claim_only: usize,
                 rivals_of: &dyn Fn(&Quantity) -> Vec<Quantity>) -> Option<Result<(Quantity, Vec<Quantity>), ()>> {
    // One attribute, the rest of the claim the aligned clause's words: several quantities belong to several things.
    if claim.quantities.len() != 1 || claim.terms.is_empty() || claim_only * 4 > claim.terms.len() {
        return None;
    }
    let quantity = &claim.quantities[0];
    if best.is_some_and(|(_, c)| c.quantities.iter().any(|(dimension, value)| *value == quantity.1 && *dimension == quantity.0)) {
        return None;
    }
    let rivals = rivals_of(quantity);
    let (chunk, aligned) = best?; // without an aligned clause, no rivals
    if rivals.is_empty() {
        return None;
    }
    let Some(opening) = claim.opening else {
        return Some(Err(()));
    };
    let mut subject: Vec<&str> = claim.names.iter().chain(opening).map(String::as_str)
        .filter(|name| clause_has(chunk, aligned, name)).collect();
    subject.sort_unstable();
    subject.dedup();
    let holders: Vec<(&Chunk, &[StoredClause])> = context.statements().filter(|(_, statement)| {
        statement.iter().any(|c| c.quantities.iter().any(|(dimension, value)| *value == quantity.1 && *dimension == quantity.0))
    }).collect();
    let said_in = |name: &str, (chunk, statement): &(&Chunk, &[StoredClause])| statement.iter().any(|c| clause_has(chunk, c, name));
    (!subject.is_empty() && !holders.is_empty() && subject.iter().any(|name| !holders.iter().any(|h| said_in(name, h))))
        .then(|| Ok((quantity.clone(), rivals)))
}

/// The claim's names that the context does not have in any case or position (names are lower-cased terms too), nor
/// as a demonym; for a short claim its capitalised words' stems too ("Scotland." opens with a name), in order. A
/// negated claim's places are none of them when the context names a place.
pub fn missing_names(rules: &Rules, context: &Context, claim: &Claim) -> Vec<String> {
    let demonym = |name: &str| demonym_of(&rules.demonym_endings, context, name);
    let mut missing: Vec<String> = claim.names.iter()
        .filter(|name| !context.chunks.iter().any(|chunk| chunk.has_name(name)) && !context.has_term(name) && !demonym(name))
        .cloned().collect();
    if claim.units <= rules.too_short_units {
        missing.extend(claim.opening.unwrap_or_default().iter().filter(|name| !context.has_term(name) && !demonym(name)).cloned());
    }
    // A context that lists places holds the others out: "新加坡不在配送范围内" agrees with its list.
    if claim.negated && missing.iter().any(|name| rules.places.contains(name))
        && context.chunks.iter().any(|chunk| rules.places.iter().any(|place| chunk.has_name(place))) {
        missing.retain(|name| !rules.places.contains(name));
    }
    missing.sort_unstable();
    missing.dedup();
    missing
}

/// Belgian clubs for clubs in Belgium, Chinese cities for China: the name's stem without the first demonym ending it
/// has (four characters left at least) opens a term of the context ("belg" in "belgium"). And the other way, Latvia
/// for "latvian ilze", China for Chinese: a term of the context is such a demonym of a root that opens the name, the
/// name at most three letters longer than the root ("chinatown" is no "chinese").
fn demonym_of(endings: &[String], context: &Context, name: &str) -> bool {
    let terms = || context.chunks.iter().flat_map(|chunk| chunk.vocab.iter());
    if let Some(root) = demonym_root(endings, name) {
        if terms().any(|term| term.starts_with(root)) {
            return true;
        }
    }
    terms().any(|term| {
        term.as_bytes().first() == name.as_bytes().first()
            && demonym_root(endings, term).is_some_and(|root| name.starts_with(root) && name.len() - root.len() <= 3)
    })
}

/// The word's stem without the first demonym ending it has, four characters left at least ("belg" of "belgian").
fn demonym_root<'w>(endings: &[String], word: &'w str) -> Option<&'w str> {
    let letters = word.chars().count();
    endings.iter().find(|ending| word.ends_with(ending.as_str()) && letters - ending.chars().count() >= 4)
        .map(|ending| &word[..word.len() - ending.len()])
}
