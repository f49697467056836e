//! What a session's question is to the one before it (feedback/satisfaction.py says how turns are classified and
//! what was measured): each question's analysis (its normalised text, terms and the things it names), a bounded cache
//! of recent ones, and the classification. Python's regexes, done by hand on chars with Python's classes (lexical.rs):
//!   normalised: `[^a-z0-9'’{CJK}]+` replaced by a space in the lower-cased question, stripped;
//!   named things: `(?<!^)(?<![.!?。！？]\s)(?<![.!?。！？])\b[A-Z][A-Za-z0-9+'’]+|\d+(?:[.,]\d+)*` found in the
//!   stripped question, lower-cased;
//!   a follow-up opener: `^(?:and|also|…|what else)\b|^(?:那|…|再问)|呢$` on the normalised text.
use std::collections::VecDeque;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyFrozenSet;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::clause::Analyser;
use crate::lexical::{is_cjk, is_decimal, is_space, is_word};

const CACHED_QUESTION_BYTES: i64 = 300; // an entry besides its strings: key slot, tuple, frozenset
const OPENERS: [&str; 11] = ["and", "also", "plus", "what about", "how about", "what if", "same for", "then",
                             "but what about", "and what about", "what else"];
const CJK_OPENERS: [&str; 7] = ["那", "那么", "还有", "另外", "如果", "顺便", "再问"];
const SENTENCE_ENDS: [char; 6] = ['.', '!', '?', '。', '！', '？'];

pub struct Analysis {
    pub text: String,
    pub terms: FxHashSet<String>,
    pub named: FxHashSet<String>,
}

pub fn normalised(question: &str) -> String {
    let mut out = String::with_capacity(question.len());
    let mut gap = false;
    for c in question.to_lowercase().chars() {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '\'' || c == '’' || is_cjk(c) {
            if gap {
                out.push(' ');
                gap = false;
            }
            out.push(c);
        } else {
            gap = true;
        }
    }
    if gap {
        out.push(' ');
    }
    out.trim_matches(is_space).to_owned()
}

/// What a question names beyond its frame: capitalised words inside it and numbers, lower-cased.
pub fn named_things(question: &str) -> FxHashSet<String> {
    let chars: Vec<char> = question.trim_matches(is_space).chars().collect();
    let mut found = FxHashSet::default();
    let mut at = 0;
    while at < chars.len() {
        let end = capitalised(&chars, at).or_else(|| number(&chars, at));
        match end {
            Some(end) => {
                found.insert(chars[at..end].iter().collect::<String>().to_lowercase());
                at = end;
            }
            None => at += 1,
        }
    }
    found
}

/// The end of `(?<!^)(?<![.!?。！？]\s)(?<![.!?。！？])\b[A-Z][A-Za-z0-9+'’]+` matched at `at`.
fn capitalised(chars: &[char], at: usize) -> Option<usize> {
    if at == 0 || !chars[at].is_ascii_uppercase() || SENTENCE_ENDS.contains(&chars[at - 1]) || is_word(chars[at - 1]) {
        return None;
    }
    if at >= 2 && SENTENCE_ENDS.contains(&chars[at - 2]) && is_space(chars[at - 1]) {
        return None;
    }
    let tail = |c: &char| c.is_ascii_alphanumeric() || matches!(c, '+' | '\'' | '’');
    let end = at + 1 + chars[at + 1..].iter().take_while(|c| tail(c)).count();
    (end > at + 1).then_some(end)
}

/// The end of `\d+(?:[.,]\d+)*` matched at `at`.
fn number(chars: &[char], at: usize) -> Option<usize> {
    let digits = |from: usize| chars[from..].iter().take_while(|c| is_decimal(**c)).count();
    let mut end = at + digits(at);
    if end == at {
        return None;
    }
    while end + 1 < chars.len() && matches!(chars[end], '.' | ',') && is_decimal(chars[end + 1]) {
        end += 1 + digits(end + 1);
    }
    Some(end)
}

/// On a normalised question: a follow-up opener ("and", "what about", 那, 还有, a closing 呢).
pub fn is_follow_up_opener(text: &str) -> bool {
    let english = OPENERS.iter().any(|opener| {
        text.strip_prefix(opener).is_some_and(|rest| rest.chars().next().is_none_or(|next| !is_word(next)))
    });
    english || CJK_OPENERS.iter().any(|opener| text.starts_with(opener)) || text.ends_with('呢')
}

/// Dice coefficient of two term sets: shared terms over the mean size (0 when either is empty).
fn similarity(a: &FxHashSet<String>, b: &FxHashSet<String>) -> f64 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    (2 * a.intersection(b).count()) as f64 / (a.len() + b.len()) as f64
}

/// repeat, follow_up, rephrase or new_topic: what `question` is to the session's `previous`. The same frame about
/// another named thing (the capital of France, then of Germany) is a new question, not a rephrase.
pub fn turn_kind(previous: &Analysis, question: &Analysis, threshold: f64) -> &'static str {
    if previous.text == question.text {
        return "repeat";
    }
    if is_follow_up_opener(&question.text) && !question.terms.is_subset(&previous.terms) {
        return "follow_up";
    }
    if !previous.named.is_subset(&question.named) && !question.named.is_subset(&previous.named) {
        return "new_topic";
    }
    if similarity(&question.terms, &previous.terms) >= threshold {
        return "rephrase";
    }
    "new_topic"
}

/// The analyses of recent questions, least recently used first out, capped in entries and bytes (the question's
/// characters, 4 bytes each at most, three times over, and a slot per term and named thing).
pub struct QuestionCache {
    items: FxHashMap<String, (u64, Arc<Analysis>, i64)>,
    order: VecDeque<(u64, String)>,
    seq: u64,
    max_entries: usize,
    max_bytes: i64,
    pub bytes: i64,
}

impl QuestionCache {
    pub fn new(max_entries: usize, max_bytes: i64) -> Self {
        QuestionCache { items: FxHashMap::default(), order: VecDeque::new(), seq: 0, max_entries, max_bytes, bytes: 0 }
    }

    /// The question's analysis, and how many entries the caps evicted to hold it.
    pub fn analyse(&mut self, question: &str, chars: i64, analyser: &Analyser) -> (Arc<Analysis>, u64) {
        self.seq += 1;
        if let Some((seq, analysis, _)) = self.items.get_mut(question) {
            *seq = self.seq;
            let analysis = analysis.clone();
            self.order.push_back((self.seq, question.to_owned()));
            self.sweep();
            return (analysis, 0);
        }
        let text = normalised(question);
        let terms = analyser.question_terms(&text);
        let named = named_things(question);
        let size = CACHED_QUESTION_BYTES + 12 * chars + 64 * (terms.len() + named.len()) as i64;
        let analysis = Arc::new(Analysis { text, terms, named });
        self.items.insert(question.to_owned(), (self.seq, analysis.clone(), size));
        self.order.push_back((self.seq, question.to_owned()));
        self.bytes += size;
        let mut evicted = 0;
        while self.items.len() > self.max_entries || self.bytes > self.max_bytes {
            let (seq, key) = self.order.pop_front().expect("an entry");
            if self.items.get(&key).is_some_and(|(live, _, _)| *live == seq) {
                self.bytes -= self.items.remove(&key).expect("an entry").2;
                evicted += 1;
            }
        }
        (analysis, evicted)
    }

    /// Stale slots (questions asked again) swept when they outnumber live ones.
    fn sweep(&mut self) {
        if self.order.len() > 2 * self.items.len() + 16 {
            let items = &self.items;
            self.order.retain(|(seq, key)| items.get(key).is_some_and(|(live, _, _)| live == seq));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{is_follow_up_opener, named_things, normalised};

    #[test]
    fn questions_read_as_the_python_regexes_read_them() {
        assert_eq!(normalised("  How do I return MY shoes?? "), "how do i return my shoes");
        assert_eq!(normalised("那手机呢？"), "那手机呢");
        let question = "What about AirPods and iPhone 15, or 1,299.50? No. Paris";
        let mut named: Vec<String> = named_things(question).into_iter().collect();
        named.sort();
        assert_eq!(named, ["1,299.50", "15", "airpods"]);
        assert!(is_follow_up_opener("and for boots") && is_follow_up_opener("那手机呢"));
        assert!(!is_follow_up_opener("andy"));
    }
}

/// feedback/satisfaction.py's normalised(question).
#[pyfunction]
#[pyo3(name = "normalised")]
pub fn normalised_of(question: &str) -> String {
    normalised(question)
}

/// feedback/satisfaction.py's named_things(question).
#[pyfunction]
#[pyo3(name = "named_things")]
pub fn named_things_of<'py>(py: Python<'py>, question: &str) -> PyResult<Bound<'py, PyFrozenSet>> {
    PyFrozenSet::new(py, named_things(question))
}

type AnalysisTuple = (String, FxHashSet<String>, FxHashSet<String>);

/// feedback/satisfaction.py's turn_kind(previous, question, threshold), on analyses as tuples (text, terms, named).
#[pyfunction]
#[pyo3(name = "turn_kind")]
pub fn turn_kind_of(previous: AnalysisTuple, question: AnalysisTuple, threshold: f64) -> &'static str {
    let analysis = |(text, terms, named): AnalysisTuple| Analysis { text, terms, named };
    turn_kind(&analysis(previous), &analysis(question), threshold)
}
