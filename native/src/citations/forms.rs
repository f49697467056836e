//! What a bracket's content cites (scorers/citations.py's forms): a rank or a list and ranges of ranks, a footnote,
//! a chunk's id, or an explicit form ("source: kb-1, 2", "doc2", "doc kb-12"). Each grammar is written out as the
//! Python regular expressions it replaced read it, alternatives in their order, with Python's character classes
//! (\d: decimal digits of any script, \s: str.isspace, \w: letters and numbers) and its IGNORECASE ("ſ" is an "s").
use std::borrow::Cow;

use crate::clause::digit_value;
use crate::lexical::{is_decimal, is_space, is_word};

use super::{Marker, Resolver, MAX_RANGE};

/// Python's str.strip() with no argument.
pub fn py_strip(text: &str) -> &str {
    text.trim_matches(is_space)
}

/// Python's str.isdigit(): the decimal digits and the other digits (superscripts, circled: Numeric_Type=Digit).
fn is_py_digit(c: char) -> bool {
    is_decimal(c)
        || matches!(c, '\u{b2}'..='\u{b3}' | '\u{b9}' | '\u{1369}'..='\u{1371}' | '\u{19da}' | '\u{2070}'
            | '\u{2074}'..='\u{2079}' | '\u{2080}'..='\u{2089}' | '\u{2460}'..='\u{2468}' | '\u{2474}'..='\u{247c}'
            | '\u{2488}'..='\u{2490}' | '\u{24ea}' | '\u{24f5}'..='\u{24fd}' | '\u{24ff}' | '\u{2776}'..='\u{277e}'
            | '\u{2780}'..='\u{2788}' | '\u{278a}'..='\u{2792}' | '\u{10a40}'..='\u{10a43}' | '\u{10e60}'..='\u{10e68}'
            | '\u{11052}'..='\u{1105a}' | '\u{1f100}'..='\u{1f10a}')
}

/// `\d{1,3}` matching the whole text.
fn is_small_number(text: &str) -> bool {
    !text.is_empty() && text.len() <= 12 && text.chars().all(is_decimal) && text.chars().count() <= 3
}

/// int() of 1 to 3 decimal digits of any script.
fn value(digits: &str) -> usize {
    digits.chars().fold(0, |total, c| total * 10 + usize::from(digit_value(c)))
}

/// The byte length of the `\d{1,3}` at `at` (its longest), 0 when there is none.
fn number_at(text: &str, at: usize) -> usize {
    text[at..].char_indices().take_while(|&(_, c)| is_decimal(c)).take(3).last().map_or(0, |(i, c)| i + c.len_utf8())
}

/// The end of the whitespace at `at` (Python's `\s*`).
pub fn spaces_at(text: &str, at: usize) -> usize {
    text[at..].find(|c: char| !is_space(c)).map_or(text.len(), |end| at + end)
}

/// The end of the character at `at` when it is one of `set`.
pub fn char_in(text: &str, at: usize, set: &[char]) -> Option<usize> {
    text[at..].chars().next().filter(|c| set.contains(c)).map(|c| at + c.len_utf8())
}

const DASHES: [char; 4] = ['-', '–', '—', '~'];
const LIST_SEPARATORS: [char; 5] = [',', '，', '、', ';', '；'];

/// A number list's items, (low, high of a range) as written: `\d{1,3}(?:\s*[-–—~]\s*\d{1,3})?` separated by
/// `\s*[,，、;；]\s*`, the whole text; None when the text is not one.
fn number_list(text: &str) -> Option<Vec<(&str, Option<&str>)>> {
    let mut items = Vec::new();
    let mut at = 0;
    loop {
        let low = number_at(text, at);
        if low == 0 {
            return None;
        }
        let low_text = &text[at..at + low];
        at += low;
        let mut high_text = None;
        if let Some(dash) = char_in(text, spaces_at(text, at), &DASHES) {
            let start = spaces_at(text, dash);
            let high = number_at(text, start);
            if high == 0 {
                return None; // the optional range fails, and a dash is no separator
            }
            high_text = Some(&text[start..start + high]);
            at = start + high;
        }
        items.push((low_text, high_text));
        if at == text.len() {
            return Some(items);
        }
        at = spaces_at(text, char_in(text, spaces_at(text, at), &LIST_SEPARATORS)?);
    }
}

/// A number list by rank, expanded to at most `room` markers, and the count of those past it; None for a range no
/// app writes (reversed, or MAX_RANGE wide or more).
fn numbers<'t>(items: &[(&'t str, Option<&'t str>)], resolver: &mut Resolver<'_>, room: usize) -> Option<(Vec<Marker<'t>>, usize)> {
    let mut markers = Vec::new();
    let mut count = 0;
    for &(low_text, high_text) in items {
        let low = value(low_text);
        let high = high_text.map_or(low, value);
        if !(low <= high && high < low + MAX_RANGE) {
            return None;
        }
        count += high - low + 1;
        let take = (high - low + 1).min(room - markers.len());
        if high_text.is_none() && take > 0 {
            markers.push(Marker { written: Cow::Borrowed(low_text), index: resolver.rank(low) });
        } else if take > 0 {
            markers.extend((low..low + take).map(|rank| Marker { written: Cow::Owned(rank.to_string()), index: resolver.rank(rank) }));
        }
    }
    let past = count - markers.len();
    Some((markers, past))
}

/// The markers a bracket's content makes, at most `room` of them, and the count of the rest; None when it is
/// ordinary text ("see below", "sic").
pub fn markers<'t>(content: &'t str, resolver: &mut Resolver<'_>, room: usize) -> Option<(Vec<Marker<'t>>, usize)> {
    let text = py_strip(content);
    if is_small_number(text) {
        // "[1]", most markers
        return Some(if room > 0 { (vec![Marker { written: Cow::Borrowed(text), index: resolver.rank(value(text)) }], 0) } else { (Vec::new(), 1) });
    }
    if let Some(items) = number_list(text) {
        return numbers(&items, resolver, room);
    }
    let mut found = named(text, resolver)?; // a few at most: the content is 256 characters at most
    let past = found.len().saturating_sub(room);
    found.truncate(room);
    Some((found, past))
}

/// A footnote, a chunk id or an explicit form's markers; None when the content is none of them.
fn named<'t>(text: &'t str, resolver: &mut Resolver<'_>) -> Option<Vec<Marker<'t>>> {
    let one = |index| Some(vec![Marker { written: Cow::Borrowed(text), index }]);
    if let Some(note) = text.strip_prefix('^') {
        if is_small_number(note) {
            return one(resolver.rank(value(note)));
        }
        if note.is_empty() || note.contains(is_space) {
            return None;
        }
        return one(Some(resolver.chunk_id(note)?)); // "[^note]" names a chunk only by its id
    }
    if text.is_empty() {
        return None;
    }
    if let Some(index) = resolver.chunk_id(text) {
        return one(Some(index));
    }
    match explicit(text)? {
        Explicit::Rank(rank) => one(resolver.rank(value(rank))),
        Explicit::DocId(doc_id) => {
            let index = resolver.chunk_id(doc_id);
            // "[doc kb-9]" is a citation even when kb-9 was not retrieved; "[doc below]" is no id at all.
            (index.is_some() || doc_id.chars().any(is_py_digit)).then(|| vec![Marker { written: Cow::Borrowed(doc_id), index }])
        }
        Explicit::Items(items) => {
            let found: Vec<Marker<'t>> =
                split_items(py_strip(items)).into_iter().filter(|item| !item.is_empty()).map(|item| explicit_item(item, resolver)).collect();
            (!found.is_empty()).then_some(found)
        }
    }
}

fn explicit_item<'t>(item: &'t str, resolver: &mut Resolver<'_>) -> Marker<'t> {
    let bare = item.trim_matches(['[', ']', '【', '】', '［', '］']); // "(sources: [1], [2])"
    let item = if bare.is_empty() { item } else { bare };
    let index = if is_small_number(item) {
        resolver.rank(value(item))
    } else if let Some(Explicit::Rank(rank)) = explicit(item) {
        resolver.rank(value(rank)) // "sources: doc1, doc2"
    } else {
        resolver.chunk_id(item)
    };
    Marker { written: Cow::Borrowed(item), index }
}

/// Which alternative of the explicit forms matched the whole text, and what it captured.
enum Explicit<'t> {
    Items(&'t str),  // (?:sources?|来源)\s*[:：]\s*(?P<items>.+)
    Rank(&'t str),   // (?:sources?|doc(?:ument)?)\s*[-_#:：]?\s*(?P<rank>\d{1,3})
    DocId(&'t str),  // doc(?:ument)?(?:\s*[:：#]\s*|\s+)(?P<doc_id>\S+)
}

/// The byte length of `word` (lower-case ASCII) at the start of `text`, compared as Python's IGNORECASE does.
fn keyword(text: &str, word: &str) -> Option<usize> {
    let mut chars = text.char_indices();
    for expected in word.chars() {
        let (_, c) = chars.next()?;
        if !(c.to_ascii_lowercase() == expected || (expected == 's' && c == 'ſ')) {
            return None;
        }
    }
    Some(chars.next().map_or(text.len(), |(at, _)| at))
}

/// "source" or "sources", its length.
fn source(text: &str) -> Option<usize> {
    let at = keyword(text, "source")?;
    Some(keyword(&text[at..], "s").map_or(at, |s| at + s))
}

/// `(?:sources?|来源)` (IGNORECASE) at the start of the text, its length.
pub fn sourced(text: &str) -> Option<usize> {
    source(text).or_else(|| text.starts_with("来源").then_some("来源".len()))
}

/// "doc" or "document", its length: a "document" is never read as "doc" and "ument" (nothing matches after that).
fn doc(text: &str) -> Option<usize> {
    let at = keyword(text, "doc")?;
    Some(keyword(&text[at..], "ument").map_or(at, |rest| at + rest))
}

fn explicit(text: &str) -> Option<Explicit<'_>> {
    if let Some(at) = sourced(text) {
        if let Some(colon) = char_in(text, spaces_at(text, at), &[':', '：']) {
            let rest = &text[colon..];
            let mut items = rest.trim_start_matches(is_space);
            if items.is_empty() {
                // `\s*` gives its last space back when `.+` has nothing else
                items = rest.chars().next_back().map_or("", |last| &rest[rest.len() - last.len_utf8()..]);
            }
            if !items.is_empty() && !items.contains('\n') {
                return Some(Explicit::Items(items));
            }
        }
    }
    let named = source(text).or_else(|| doc(text))?;
    let mut at = spaces_at(text, named);
    at = char_in(text, at, &['-', '_', '#', ':', '：']).unwrap_or(at);
    at = spaces_at(text, at);
    if is_small_number(&text[at..]) {
        return Some(Explicit::Rank(&text[at..]));
    }
    let named = doc(text)?;
    let doc_id = |at: usize| Some(&text[at..]).filter(|id| !id.is_empty() && !id.contains(is_space)).map(Explicit::DocId);
    char_in(text, spaces_at(text, named), &[':', '：', '#'])
        .and_then(|colon| doc_id(spaces_at(text, colon)))
        .or_else(|| (spaces_at(text, named) > named).then(|| doc_id(spaces_at(text, named))).flatten())
}

/// re.split of `\s*(?:[,，、;；]|\band\b)\s*` (IGNORECASE): the pieces between separators, empty ones too.
fn split_items(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let (mut last, mut at) = (0, 0);
    while at < text.len() {
        let start = spaces_at(text, at);
        let separator = char_in(text, start, &LIST_SEPARATORS).or_else(|| {
            let end = start + keyword(&text[start..], "and")?;
            let before = text[..start].chars().next_back().is_none_or(|c| !is_word(c));
            let after = text[end..].chars().next().is_none_or(|c| !is_word(c));
            (before && after).then_some(end)
        });
        match separator {
            Some(end) => {
                pieces.push(&text[last..at]);
                last = spaces_at(text, end);
                at = last;
            }
            None => at += text[at..].chars().next().map_or(1, char::len_utf8),
        }
    }
    pieces.push(&text[last..]);
    pieces
}
