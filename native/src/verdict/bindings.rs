//! The local judge's verdict rules' binding (judging/local_judge.py, _Context.claims and check): claims analysed,
//! their evidence and what the rules that read the chunks found, in one call.
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use crate::bridge::{guarded, with_text};
use crate::chunk::bindings::{Aligned, ClaimSets, PyContext};
use crate::clause::bindings::{clause_fields, TextAnalyser};
use crate::clause::memo::StemMemo;
use crate::clause::{self, Quantity};
use crate::verdict::{self, Claim, Context, Contradiction, Rules};

/// A contradiction as Python reads it: (its rule, the quantity and its rivals, the text of the clause that negates).
type Found = (&'static str, Option<Quantity>, Vec<Quantity>, Option<String>);
/// What VerdictRules.check gives: the evidence, the quantities lacking, a contradiction, the names lacking.
type Checked = (f64, f64, Aligned, Vec<Quantity>, Option<Found>, Vec<String>);
/// What VerdictRules.claims gives of each claim: (its units, its terms, whether it has a quantity, its CJK characters,
/// whether it counts in digits or words, what the rules found, its Clause's fields or None).
type Claimed<'py> = (usize, usize, bool, usize, bool, Checked, Option<Bound<'py, PyTuple>>);

/// The rules' tables, handed over once from judging/local_judge.py, with the text analyser (scorers/text.py's).
#[pyclass(frozen, module = "ragpulse._native")]
pub struct VerdictRules {
    rules: Rules,
    analyser: Py<TextAnalyser>,
    /// The swap rule's least share of a claim's terms in its aligned clause and most terms either lacks: a claim
    /// that meets them is given its Clause's fields (the rule reads them; analysing it again cost ~10 µs).
    swap_aligned_at_least: f64,
    swap_max_terms: usize,
}

/// The claim's names as given (a set's order), what it says, and the stems of its capitalised words when read.
struct Said<'a> {
    names: Vec<String>,
    governed: Vec<String>,
    opening: Option<&'a [String]>,
    negated: bool,
    units: usize,
}

impl VerdictRules {
    /// Whether the swap rule reads the claim (judging/local_judge.py's _verdict, where no rule before it held): its
    /// aligned clause has enough of it, and each lacks a few of the other's terms.
    fn swaps(&self, checked: &Checked, units: usize) -> bool {
        let few = |terms: usize| 0 < terms && terms <= self.swap_max_terms;
        checked.2.as_ref().is_some_and(|(_, _, _, _, claim_only, aligned_only)| {
            checked.1 / units as f64 >= self.swap_aligned_at_least && few(*claim_only) && few(*aligned_only)
        })
    }

    /// A claim against the context: ChunkContext.evidence's (supported, aligned supported, alignment), then its
    /// quantities the context lacks (in order), the contradiction of the rules before the swap (None when none holds)
    /// and the names the context lacks (in order). Without `said.opening`, the subject rule's contradiction is the rule
    /// "opening" when it needs them (making them for every claim with one quantity cost more than the rules).
    fn checked(&self, context: &PyContext, sets: &ClaimSets, said: &Said<'_>, margin: f64) -> PyResult<Checked> {
        let (supported, by_best, alignment) = context.evidence_of(sets, margin)?;
        let claim = Claim {
            terms: sets.terms().collect(), quantities: &sets.quantities, names: &said.names, opening: said.opening,
            negated: said.negated, governed: &said.governed, units: said.units,
        };
        let within = Context { chunks: context.chunks() };
        let aligned = alignment.as_ref().map(|(_, best, near, _, claim_only, _)| verdict::Aligned {
            best: *best, near, supported: by_best, claim_only: *claim_only,
        });
        let rules = &self.rules;
        let (missing, found, names) = guarded(|| {
            let missing = within.missing_quantities(&sets.quantities);
            let found = verdict::contradiction(rules, &within, &claim, &missing, aligned.as_ref());
            (missing, found, verdict::missing_names(rules, &within, &claim))
        })?;
        let found = found.map(|found| match found {
            Contradiction::Quantity(quantity, rivals) => ("quantity", Some(quantity), rivals, None),
            Contradiction::Subject(quantity, rivals) => ("subject", Some(quantity), rivals, None),
            Contradiction::Polarity => ("polarity", None, Vec::new(), None),
            Contradiction::NegatedTerm(text) => ("negated_term", None, Vec::new(), Some(text.into_string())),
            Contradiction::Opening => ("opening", None, Vec::new(), None),
        });
        Ok((supported, by_best, alignment, missing, found, names))
    }
}

#[pymethods]
impl VerdictRules {
    #[new]
    fn new(
        demonym_endings: Vec<String>, aligned_at_least: f64, too_short_units: usize, analyser: Py<TextAnalyser>,
        swap_aligned_at_least: f64, swap_max_terms: usize,
    ) -> Self {
        let places = analyser.get().analyser.tables.cjk_places.values().flatten().flat_map(|(_, names)| names.iter().cloned()).collect();
        let rules = Rules { demonym_endings, aligned_at_least, too_short_units, places };
        VerdictRules { rules, analyser, swap_aligned_at_least, swap_max_terms }
    }

    /// An answer's claims, each text analysed as scorers/text.py's clause() does and checked against the context, in one
    /// call (a call a claim, and the Python around it, cost ~1.5 µs a claim), in order, each as claimed() gives it.
    /// `memo`: the stems of words the judge has seen.
    #[pyo3(signature = (context, texts, margin, declining, memo = None))]
    fn claims<'py>(
        &self, context: PyRef<'py, PyContext>, texts: &Bound<'py, PyList>, margin: f64, declining: bool,
        memo: Option<PyRef<'py, StemMemo>>,
    ) -> PyResult<Vec<Option<Claimed<'py>>>> {
        texts.iter().map(|text| self.claimed(&context, &text.cast_into::<PyString>()?, margin, declining, memo.as_deref()))
            .collect()
    }
}

impl VerdictRules {
    /// A claim's text analysed and checked, its sets made into Python objects only when Python reads them: None when
    /// it is no claim (no term nor quantity, or only conversation: is_chatter), else (its units as size() counts them,
    /// its terms, whether it has a quantity, its CJK characters, whether it has a number in digits or words, what the
    /// rules found (see checked()), its Clause's fields as TextAnalyser.clause gives them or None). The rules read its opening names (a
    /// claim of too_short_units or fewer, or the subject rule's "opening": then checked again with them). The fields
    /// are given when `declining` and it has no quantity (the refusal weighing reads them) and when the swap rule reads
    /// them (VerdictRules::swaps).
    fn claimed<'py>(
        &self, context: &PyContext, text: &Bound<'py, PyString>, margin: f64, declining: bool, memo: Option<&StemMemo>,
    ) -> PyResult<Option<Claimed<'py>>> {
        let analyser = &self.analyser.get().analyser;
        let c = with_text(text, |text| guarded(|| analyser.clause_with(text, memo)))?;
        let fields = |wanted: bool| if wanted { clause_fields(text.py(), &c).map(Some) } else { Ok(None) };
        let mut quantities: Vec<Quantity> = Vec::with_capacity(c.quantities.len());
        for quantity in &c.quantities { // distinct as a frozenset keeps them: 0.0 is -0.0, NaN is no NaN
            if !quantities.iter().any(|(dimension, value)| *dimension == quantity.0 && *value == quantity.1) {
                quantities.push(quantity.clone());
            }
        }
        let chatter = &analyser.tables.chatter;
        if quantities.is_empty() && c.terms.iter().all(|term| chatter.contains(term)) {
            return Ok(None);
        }
        let cjk = c.parts.iter().map(|part| part.chars().count()).sum::<usize>();
        let units = c.words.len() + cjk + quantities.len();
        let (terms, quantified) = (c.terms.len(), !quantities.is_empty());
        let counts = quantified || !c.spelled.is_empty();
        let opening_of = || with_text(text, |text| guarded(|| opening_names(analyser, text)));
        let (short, late): (Option<Vec<String>>, Vec<String>);
        short = if units <= self.rules.too_short_units { Some(opening_of()?) } else { None };
        let given = fields(declining && !quantified)?;
        let parts = c.parts.iter().map(|part| part.chars().collect()).collect();
        let sets = ClaimSets::new(c.terms.into_iter().collect(), quantities, c.words.into_iter().collect(), parts);
        let mut said = Said {
            names: c.names.into_iter().collect(), governed: c.governed.into_iter().collect(), opening: short.as_deref(),
            negated: c.negated, units,
        };
        let mut checked = self.checked(context, &sets, &said, margin)?;
        if matches!(&checked.4, Some(("opening", ..))) { // rare: a quantity with a rival of its kind in the aligned clause
            late = opening_of()?;
            said.opening = Some(&late);
            checked = self.checked(context, &sets, &said, margin)?;
        }
        let given = match given {
            None if checked.4.is_none() && self.swaps(&checked, units) => {
                // the sets moved into the check, the Clause made again from them
                let clause = clause::Clause {
                    terms: sets.terms().map(str::to_owned).collect(), words: sets.words.into_iter().collect(),
                    names: said.names.into_iter().collect(), governed: said.governed.into_iter().collect(), ..c
                };
                Some(clause_fields(text.py(), &clause)?)
            }
            given => given,
        };
        Ok(Some((units, terms, quantified, cjk, counts, checked, given)))
    }
}

/// The stems of a claim's capitalised words (clause::capitalised), each as a name is compared (scorers/text.py's
/// name_stems: its content words' stems, none of conversation), in order.
fn opening_names(analyser: &clause::Analyser, text: &str) -> Vec<String> {
    let mut names: Vec<String> = clause::capitalised(text).into_iter()
        .flat_map(|word| analyser.words(&word.to_lowercase()))
        .filter(|stem| !analyser.tables.chatter.contains(stem))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}
