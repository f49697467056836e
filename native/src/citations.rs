//! Inline citations in answers (scorers/citations.py says what they are and what they mean): the marker groups of
//! an answer read up to its MAX_MARKERS-th marker, each resolved to a retrieved chunk by rank or by id, the answer
//! without them, and each group given to the sentence it follows. Offsets are bytes here and characters in Python;
//! the order of positions, all that the ownership compares, is the same in both. Every step reads the text once
//! or a bounded stretch of it at each opening bracket (128 or 256 characters), so hostile answers cost their length.
pub mod bindings;
mod forms;
pub mod stage;

use std::borrow::Cow;
use std::ops::Range;

use rustc_hash::FxHashMap;

use crate::lexical::{is_space, is_word};
use forms::{char_in, py_strip, spaces_at};

/// Markers read per answer, scorers/citations.py's MAX_MARKERS (collector/events.py's MAX_CITATIONS).
pub const MAX_MARKERS: usize = 256;
/// "[1-3]" is three markers; a range this wide or wider ("[1-500]") is no citation.
pub const MAX_RANGE: usize = 50;

/// A marker as written, and the index of the chunk it names (None: dangling).
pub struct Marker<'t> {
    pub written: Cow<'t, str>,
    pub index: Option<usize>,
}

/// Chunk indices by rank and by id; the id tables are built only when an answer names an id.
pub struct Resolver<'i> {
    ids: &'i [Option<&'i str>],
    fold: &'i dyn Fn(&str) -> String, // Python's str.casefold, for text that is not ASCII
    exact: Option<FxHashMap<&'i str, usize>>,
    folded: FxHashMap<String, usize>,
}

impl<'i> Resolver<'i> {
    pub fn new(ids: &'i [Option<&'i str>], fold: &'i dyn Fn(&str) -> String) -> Self {
        Resolver { ids, fold, exact: None, folded: FxHashMap::default() }
    }

    pub fn rank(&self, rank: usize) -> Option<usize> {
        (1..=self.ids.len()).contains(&rank).then(|| rank - 1)
    }

    fn casefold(&self, text: &str) -> String {
        if text.is_ascii() { text.to_ascii_lowercase() } else { (self.fold)(text) }
    }

    /// An exact id first, then one that differs only in case; the first chunk of an id wins.
    pub fn chunk_id(&mut self, text: &str) -> Option<usize> {
        if text.is_empty() {
            return None;
        }
        if self.exact.is_none() {
            let mut exact = FxHashMap::default();
            for (index, id) in self.ids.iter().enumerate() {
                if let Some(id) = id.filter(|id| !id.is_empty()) {
                    exact.entry(id).or_insert(index);
                    let folded = self.casefold(id);
                    self.folded.entry(folded).or_insert(index);
                }
            }
            self.exact = Some(exact);
        }
        if let Some(&index) = self.exact.as_ref().and_then(|exact| exact.get(text)) {
            return Some(index);
        }
        self.folded.get(&self.casefold(text)).copied()
    }
}

/// False when the answer has no citation for certain (scorers/citations.py's may_cite).
pub fn may_cite(answer: &str) -> bool {
    answer.contains(['[', '【', '［']) || answer.contains("ource") || answer.contains("来源")
}

/// The answer without its footnote and reference definition lines ("[^1]: Returns policy", "[1]: https://..."):
/// `^[ \t]*\[\^?[^\]\n]{1,64}\]:[^\n]*(?:\n|$)`, each line with its newline.
pub fn without_definitions(answer: &str) -> Cow<'_, str> {
    if !answer.contains("]:") {
        return Cow::Borrowed(answer);
    }
    let defines = |line: &str| {
        let Some(label) = line.trim_start_matches([' ', '\t']).strip_prefix('[') else { return false };
        let Some(close) = label.find(']') else { return false };
        let length = label[..close].chars().count();
        label[close + 1..].starts_with(':') && ((1..=64).contains(&length) || length == 65 && label.starts_with('^'))
    };
    Cow::Owned(answer.split_inclusive('\n').filter(|line| !defines(line)).collect())
}

/// Code spans and fenced blocks, (start, end): `` ```.*?(?:```|$)|`[^`\n]+` `` (DOTALL); brackets there are no
/// citation.
fn code_spans(answer: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    if !answer.contains('`') {
        return spans;
    }
    let mut at = 0;
    while let Some(found) = answer[at..].find('`') {
        let start = at + found;
        if answer[start..].starts_with("```") {
            let body = start + 3;
            let end = match answer[body..].find("```") {
                Some(close) => body + close + 3,
                None if answer.ends_with('\n') && answer.len() > body => answer.len() - 1, // `$` before a final newline
                None => answer.len(),
            };
            spans.push((start, end));
            at = end;
            continue;
        }
        at = start + 1;
        if let Some(close) = answer[at..].find(['`', '\n']).filter(|&close| close > 0) {
            if answer.as_bytes()[at + close] == b'`' {
                spans.push((start, at + close + 1));
                at += close + 1;
            }
        }
    }
    spans
}

fn in_code(spans: &[(usize, usize)], position: usize) -> bool {
    let after = spans.partition_point(|&(start, _)| start <= position); // past the last span starting at or before it
    after > 0 && position < spans[after - 1].1
}

/// A set of bytes to search for: a load and a test a byte, where a search for characters decodes each one.
struct ByteSet([bool; 256]);

impl ByteSet {
    const fn of(bytes: &[u8]) -> Self {
        let mut set = [false; 256];
        let mut at = 0;
        while at < bytes.len() {
            set[bytes[at] as usize] = true;
            at += 1;
        }
        ByteSet(set)
    }

    fn find(&self, text: &str, from: usize) -> Option<usize> {
        text.as_bytes()[from..].iter().position(|&byte| self.0[usize::from(byte)]).map(|at| from + at)
    }
}

/// [ ( and the first bytes of 【 ［ （ (E3 80 90, EF BC BB, EF BC 88): each found is where a character starts.
const OPENS: ByteSet = ByteSet::of(b"[(\xE3\xEF");
/// . ! ? newline and the first bytes of 。！？ (E3 80 82, EF BC 81, EF BC 9F).
const STOPS: ByteSet = ByteSet::of(b".!?\n\xE3\xEF");

/// The next opening character at or after `from`: [ 【 ［ ( （.
fn next_open(text: &str, from: usize) -> Option<(usize, char)> {
    let mut at = from;
    while let Some(found) = OPENS.find(text, at) {
        let c = text[found..].chars().next()?;
        if matches!(c, '[' | '(' | '【' | '［' | '（') {
            return Some((found, c));
        }
        at = found + c.len_utf8();
    }
    None
}

/// A bracket's content (1-128 characters, no newline nor bracket of its kind) up to its closing one.
fn bracket(text: &str, start: usize, open: char, close: char) -> Option<(Range<usize>, usize)> {
    for (count, (offset, c)) in text[start..].char_indices().enumerate() {
        if c == close {
            return (count > 0).then(|| (start..start + offset, start + offset + c.len_utf8()));
        }
        if c == open || c == '\n' || count == 128 {
            return None;
        }
    }
    None
}

/// A parenthesis that names its source: `\s*((?i:sources?|来源)\s*[:：][^()（）\n]{1,256})[)）]`.
fn source_parenthesis(text: &str, start: usize) -> Option<(Range<usize>, usize)> {
    let named = spaces_at(text, start);
    let colon = char_in(text, spaces_at(text, named + forms::sourced(&text[named..])?), &[':', '：'])?;
    for (count, (offset, c)) in text[colon..].char_indices().enumerate() {
        if c == ')' || c == '）' {
            return (count > 0).then(|| (named..colon + offset, colon + offset + c.len_utf8()));
        }
        if c == '(' || c == '（' || c == '\n' || count == 256 {
            return None;
        }
    }
    None
}

/// The group opening at `at`: its content and the end of the match.
fn group_at(text: &str, at: usize, open: char) -> Option<(Range<usize>, usize)> {
    let start = at + open.len_utf8();
    match open {
        '[' => bracket(text, start, '[', ']'),
        '【' => bracket(text, start, '【', '】'),
        '［' => bracket(text, start, '［', '］'),
        _ => source_parenthesis(text, start),
    }
}

/// The answer without the markers read, and each marker group read with its position in that text.
pub struct Scan<'t> {
    pub text: String,
    pub placed: Vec<(usize, Vec<Marker<'t>>)>,
    pub read: usize, // the length of `text` read: all of it, unless the answer has markers past MAX_MARKERS
    pub over_cap: bool, // it has: `text` from `read` on is as written
}

/// "capital.[1]Lyon" without its marker still ends a sentence at the period.
fn push_after_marker(text: &mut String, piece: &str, tail: Option<char>) {
    if matches!(tail, Some('.' | '!' | '?')) && piece.chars().next().is_some_and(|c| !is_space(c)) {
        text.push(' ');
    }
    text.push_str(piece);
}

/// The answer (without its definition lines) read up to the group that holds its MAX_MARKERS-th marker.
pub fn scan<'t>(answer: &'t str, resolver: &mut Resolver<'_>) -> Scan<'t> {
    let code = code_spans(answer);
    let mut text = String::with_capacity(answer.len());
    let mut placed = Vec::new();
    let (mut last, mut at, mut budget, mut over) = (0, 0, MAX_MARKERS, false);
    let mut tail = None; // the last character of the text so far, once a marker was taken out
    while let Some((start, open)) = next_open(answer, at) {
        let Some((content, end)) = group_at(answer, start, open) else {
            at = start + open.len_utf8();
            continue;
        };
        at = end;
        if in_code(&code, start) {
            continue;
        }
        let Some((markers, past)) = forms::markers(&answer[content], resolver, budget) else { continue };
        if markers.is_empty() {
            // a marker past the cap: the rest is left as written, unread
            let read = text.len();
            push_after_marker(&mut text, &answer[last..], tail);
            return Scan { text, placed, read, over_cap: true };
        }
        let piece = answer[last..start].trim_end_matches([' ', '\t', '\u{3000}']); // "capital [1]." reads "capital."
        push_after_marker(&mut text, piece, tail);
        tail = piece.chars().next_back().or(tail);
        last = end;
        over |= past > 0;
        budget -= markers.len();
        placed.push((text.len(), markers));
    }
    push_after_marker(&mut text, &answer[last..], tail);
    let read = text.len();
    Scan { text, placed, read, over_cap: over }
}

fn skip(text: &str, at: usize, set: &[char]) -> usize {
    text[at..].find(|c: char| !set.contains(&c)).map_or(text.len(), |end| at + end)
}

/// Where sentences end: after . ! ? (and more of them, and closing quotes or brackets) followed by a space or the
/// end, after 。！？ (and their closers), and after a newline.
fn sentence_ends(text: &str) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut at = 0;
    while let Some(start) = STOPS.find(text, at) {
        let Some(c) = text[start..].chars().next() else { break };
        let after = start + c.len_utf8();
        at = match c {
            '\n' => after,
            '.' | '!' | '?' => skip(text, skip(text, after, &['.', '!', '?']), &['"', '\'', '”', '’', ')', ']']),
            '。' | '！' | '？' => skip(text, skip(text, after, &['。', '！', '？']), &['」', '』', '”', '’', '）']),
            _ => {
                at = after; // another character of those first bytes
                continue;
            }
        };
        // A period ends a sentence before a space or the end. When it does not, no stop of its run does either:
        // each reaches the same character, so the search goes on past the run (one pass over "....x").
        if !matches!(c, '.' | '!' | '?') || text[at..].chars().next().is_none_or(is_space) {
            ends.push(at);
        }
    }
    ends
}

/// Each sentence with a word in it ("---" or "…" alone is none): its text stripped, in `text`.
pub fn sentences(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut begin = 0;
    for end in sentence_ends(text).into_iter().chain([text.len()]) {
        let segment = &text[begin..end];
        let stripped = py_strip(segment);
        if stripped.chars().any(is_word) {
            let start = begin + segment.len() - segment.trim_start_matches(is_space).len();
            out.push(start..start + stripped.len());
        }
        begin = end;
    }
    out
}

/// An answer's citations: its sentences and each marker group given to the one it follows.
pub struct Owned<'t> {
    pub scan: Scan<'t>,
    pub sentences: Vec<Range<usize>>, // in scan.text, up to scan.read: past the cap none is cited nor uncited
    pub owners: Vec<(usize, Range<usize>)>, // (a sentence, its groups in scan.placed), in order; none without sentences
    pub resolved: usize,
    pub dangling: usize,
}

/// The answer's marker groups given to their sentences; None when it cites nothing.
pub fn own<'t>(answer: &'t str, resolver: &mut Resolver<'_>) -> Option<Owned<'t>> {
    let scan = scan(answer, resolver);
    if scan.placed.is_empty() {
        return None;
    }
    let sentences = sentences(&scan.text[..scan.read]);
    let mut owners: Vec<(usize, Range<usize>)> = Vec::new();
    let (mut resolved, mut dangling) = (0, 0);
    for (group, (position, markers)) in scan.placed.iter().enumerate() {
        let found = markers.iter().filter(|marker| marker.index.is_some()).count();
        resolved += found;
        dangling += markers.len() - found;
        if sentences.is_empty() {
            continue;
        }
        // The last sentence that starts before the marker: "capital. [1]" cites the sentence it follows.
        let owner = sentences.partition_point(|sentence| sentence.start < *position).saturating_sub(1);
        match owners.last_mut() {
            Some((last, groups)) if *last == owner => groups.end = group + 1,
            _ => owners.push((owner, group..group + 1)),
        }
    }
    Some(Owned { scan, sentences, owners, resolved, dangling })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owned(answer: &str, ids: &[Option<&str>]) -> Option<(String, Vec<String>, usize, usize, usize, bool)> {
        let fold = |text: &str| text.to_lowercase();
        let mut resolver = Resolver::new(ids, &fold);
        let cleaned = without_definitions(answer);
        let found = own(&cleaned, &mut resolver)?;
        let sentences = found.sentences.iter().map(|range| found.scan.text[range.clone()].to_owned()).collect();
        Some((found.scan.text.clone(), sentences, found.owners.len(), found.resolved, found.dangling, found.scan.over_cap))
    }

    #[test]
    fn markers_leave_the_text_and_cite_the_sentence_they_follow() {
        let ids = [Some("kb-1"), Some("kb-2"), Some("kb-12")];
        let (text, sentences, cited, resolved, dangling, over) =
            owned("Paris is the capital [1]. Lyon [KB-12][9].[2]Nice (source: kb-2).", &ids).unwrap();
        assert_eq!(text, "Paris is the capital. Lyon. Nice.");
        assert_eq!(sentences, ["Paris is the capital.", "Lyon.", "Nice."]);
        assert_eq!((cited, resolved, dangling, over), (3, 4, 1, false));
        assert!(owned("See [below] and `x[1]`.", &ids).is_none());
        assert!(owned("Ranges [3-1] and [1-60] are none.", &ids).is_none());
    }

    #[test]
    fn definitions_and_the_cap() {
        let ids = [Some("kb-1")];
        let answer = format!("Returns [^1].\n[^1]: policy\n{}. Then [1].", "[1]".repeat(MAX_MARKERS + 3));
        let (text, _, _, resolved, dangling, over) = owned(&answer, &ids).unwrap();
        assert!(text.starts_with("Returns.\n") && text.ends_with("[1][1][1]. Then [1]."), "{text}");
        assert_eq!((resolved, dangling, over), (MAX_MARKERS, 0, true));
    }
}
