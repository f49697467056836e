//! The local judge's verdict rules' binding (judging/local_judge.py, _Context.check): a claim's evidence and what the
//! rules that read the chunks found, in one call.
use pyo3::prelude::*;
use pyo3::types::{PyFrozenSet, PyTuple};

use crate::bridge::guarded;
use crate::chunk::bindings::{texts, Aligned, ClaimSets, PyContext};
use crate::clause::Quantity;
use crate::verdict::{self, Claim, Context, Contradiction, Rules};

/// A contradiction as Python reads it: (its rule, the quantity and its rivals, the text of the clause that negates).
type Found = (&'static str, Option<Quantity>, Vec<Quantity>, Option<String>);
/// What VerdictRules.check gives: the evidence, the quantities lacking, a contradiction, the names lacking.
type Checked = (f64, f64, Aligned, Vec<Quantity>, Option<Found>, Vec<String>);

/// The rules' tables, handed over once from judging/local_judge.py.
#[pyclass(frozen, module = "ragpulse._native")]
pub struct VerdictRules {
    rules: Rules,
}

#[pymethods]
impl VerdictRules {
    #[new]
    fn new(demonym_endings: Vec<String>, aligned_at_least: f64, too_short_units: usize) -> Self {
        VerdictRules { rules: Rules { demonym_endings, aligned_at_least, too_short_units } }
    }

    /// A claim against the context: ChunkContext.evidence's (supported, aligned supported, alignment), then its
    /// quantities the context lacks (in order), the contradiction of the rules before the swap (None when none holds)
    /// and the names the context lacks (in order). `opening`: the stems of its capitalised words, or None: read by the
    /// names of a claim of `units` <= too_short_units and by the subject rule, whose contradiction is then the rule
    /// "opening" when it needs them (ask again with them; rare: a quantity with a rival of its kind in the aligned
    /// clause). Making them for every claim with one quantity cost more than the rules.
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (context, terms, quantities, words, parts, names, opening, negated, governed, units, margin))]
    fn check(
        &self, context: PyRef<'_, PyContext>, terms: &Bound<'_, PyFrozenSet>, quantities: &Bound<'_, PyFrozenSet>,
        words: &Bound<'_, PyFrozenSet>, parts: &Bound<'_, PyTuple>, names: &Bound<'_, PyFrozenSet>,
        opening: Option<&Bound<'_, PyAny>>, negated: bool, governed: &Bound<'_, PyFrozenSet>, units: usize,
        margin: f64,
    ) -> PyResult<Checked> {
        let sets = ClaimSets::read(terms, quantities, words, parts)?;
        let (supported, by_best, alignment) = context.evidence_of(&sets, margin)?;
        let (names, governed) = (texts(names.iter())?, texts(governed.iter())?);
        let opening = opening.map(|found| texts(found.try_iter()?.collect::<PyResult<Vec<_>>>()?.into_iter())).transpose()?;
        let claim = Claim {
            terms: sets.terms().collect(), quantities: &sets.quantities, names: &names, opening: opening.as_deref(),
            negated, governed: &governed, units,
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
