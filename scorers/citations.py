"""Citations in answers: which sentence cites which retrieved chunk, on every trace, with no model.

Inline markers read: numbers by rank, 1-based as apps number them ("[1]", "[2][3]", "[1, 3]", "[1-2]",
"【1】", "［1］", footnotes "[^1]"), chunk ids in brackets ("[kb-12]": an exact id first, then one that
differs only in case), and the explicit forms "(source: kb-12)", "(sources: kb-1, kb-2)", "[doc1]",
"[doc kb-12]", "[source: 2]". A marker naming no retrieved chunk (a rank past the chunks, rank 0, an
unknown id in an explicit form) is dangling. Ordinary bracketed text is no citation: a bracket counts
only when it holds a number list or range (1 to 3 digits, a range under 50 wide), a footnote
^N, a retrieved chunk's id or an explicit form; brackets inside `code` are skipped, and footnote or
reference definition lines ("[^1]: ...", "[1]: https://...") are no sentences.

Sentences end at . ! ? (followed by a space or the end), 。！？ and newlines. A marker belongs to the
sentence it follows: "Paris is the capital [1]." and "Paris is the capital. [1]" both cite sentence one;
a marker opening the answer belongs to its first sentence.

The compiled core parses them (native/src/citations.rs); this module makes its records and counts them. The
common answer cites nothing and costs a few substring tests (`may_cite`). The work on the others is bounded per
answer, not by what it writes: an answer is read up to its MAX_MARKERS-th marker (a range expands no further)
and is then `over_cap` when it has more: those are neither resolved nor dangling, and the sentences after the
last marker read are neither cited nor uncited. An answer with that many markers is broken anyway, and one such
answer must not set the dangling share ("Paris [1-50]. " 2,000 times would count 100,000 markers).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import msgspec
from prometheus_client import CollectorRegistry

from ragpulse._native import CitationCore
from ragpulse._native import count_inline as _count_inline
from ragpulse._native import parse_citations as _parse_citations
from ragpulse._native import scan_citations
from ragpulse.collector.events import MAX_CITATIONS, Envelope, EventCitation, TraceEvent
from ragpulse.collector.telemetry.fast_metrics import CounterFamily, FastCounter
from ragpulse.collector.telemetry.labels import LabelGuard

MAX_MARKERS = MAX_CITATIONS  # per answer, inline (the crate's CITATION_MAX_MARKERS) or structured

Marker = tuple[str, int | None]  # as written, and the index of the chunk it names (None: dangling)


class CitedSentence(msgspec.Struct, frozen=True, gc=False):
    sentence: str  # the sentence as written, without its citation markers, stripped
    chunks: tuple[int, ...]  # 0-based indices into event.chunks it cites (deduplicated, in order of first mention)
    dangling: tuple[str, ...]  # its markers that name no retrieved chunk, as written inside their brackets


class Citations(msgspec.Struct, frozen=True, gc=False):
    sentences: tuple[CitedSentence, ...]  # the answer's cited sentences, in order
    uncited: int  # sentences of the answer without any citation (0 for structured citations: unknown)
    resolved: int  # markers that name a retrieved chunk
    dangling: int  # markers that name none
    over_cap: bool = False  # it has markers past MAX_MARKERS: read up to there (the rest neither resolved nor dangling)


def may_cite(answer: str) -> bool:
    """False when the answer has no citation for certain: the common case's whole cost. ("ource" catches
    "(source", "(Sources" and full-width parentheses alike; an answer that merely says "resource" is parsed.)"""
    return "[" in answer or "【" in answer or "［" in answer or "ource" in answer or "来源" in answer


class _Resolver:
    """Chunk indices by rank and by id of structured citations (the crate resolves inline markers alike); the id
    tables are built only when a citation names an id."""

    __slots__ = ("_ids", "_count", "_exact", "_folded")

    def __init__(self, chunk_ids: Sequence[str | None]) -> None:
        self._ids = chunk_ids
        self._count = len(chunk_ids)
        self._exact: dict[str, int] | None = None
        self._folded: dict[str, int] = {}

    def rank(self, rank: int) -> int | None:
        return rank - 1 if 1 <= rank <= self._count else None

    def chunk_id(self, text: str) -> int | None:
        if not text:
            return None
        if self._exact is None:
            self._exact = {}
            for index, chunk_id in enumerate(self._ids):
                if chunk_id:  # the first chunk of an id wins, as the first of a rank does
                    self._exact.setdefault(chunk_id, index)
                    self._folded.setdefault(chunk_id.casefold(), index)
        index = self._exact.get(text)
        return index if index is not None else self._folded.get(text.casefold())


def _cited(sentence: str, markers: list[Marker]) -> CitedSentence:
    if len(markers) == 1:  # most cited sentences
        written, index = markers[0]
        return CitedSentence(sentence, (index,), ()) if index is not None else CitedSentence(sentence, (), (written,))
    return CitedSentence(sentence, tuple(dict.fromkeys(i for _, i in markers if i is not None)),
                         tuple(dict.fromkeys(w for w, i in markers if i is None)))


def _counts(markers: list[Marker]) -> tuple[int, int]:
    resolved = sum(1 for _, index in markers if index is not None)
    return resolved, len(markers) - resolved


class _Scan(NamedTuple):
    text: str  # the answer without its definition lines and the markers read
    placed: list[tuple[int, list[Marker]]]  # each marker group read, with its position in `text`
    read: int  # the length of `text` read: all of it, unless the answer has markers past MAX_MARKERS
    over_cap: bool  # it has: `text` from `read` on is as written (the CPU per answer is bounded)


def _read(answer: str, chunk_ids: Sequence[str | None]) -> _Scan:
    """The answer without its definition lines and markers, and each marker group with its position in that text,
    up to the group that holds the answer's MAX_MARKERS-th marker."""
    return _Scan._make(scan_citations(answer, chunk_ids))


def parse_citations(answer: str, chunk_ids: Sequence[str | None]) -> Citations | None:
    """The answer's inline citations; None when it cites nothing (the common case, a few substring tests)."""
    found = _parse_citations(answer, chunk_ids)
    if found is None:
        return None
    sentences, uncited, resolved, dangling, over_cap = found
    return Citations(tuple(CitedSentence(*sentence) for sentence in sentences), uncited, resolved, dangling, over_cap)


class InlineCount(NamedTuple):
    """What the fast path counts of an answer's inline citations, and the answer without its markers."""

    text: str
    cited: int  # sentences
    uncited: int
    resolved: int
    dangling: int
    over_cap: bool


def count_inline(answer: str, chunk_ids: Sequence[str | None]) -> InlineCount | None:
    """parse_citations' counts without the cited sentences' records: the fast path's cost."""
    found = _count_inline(answer, chunk_ids)
    return None if found is None else InlineCount._make(found)


def strip_markers(answer: str, chunk_ids: Sequence[str | None] = ()) -> str:
    """The answer without its citation markers and definition lines, as parse_citations reads its sentences
    (without `chunk_ids`, "[kb-12]" by id alone stays: only numbers, footnotes and explicit forms go; past
    MAX_MARKERS markers, the rest stays as written)."""
    return _read(answer, chunk_ids).text if may_cite(answer) else answer


def structured_citations(citations: Sequence[EventCitation], chunk_ids: Sequence[str | None]) -> Citations | None:
    """Citations the app reported: each entry a cited sentence (its text, or "" when it gave none). Which
    sentences cite nothing is not known from them: `uncited` is 0 and coverage is not derived from them."""
    resolver = _Resolver(chunk_ids)
    sentences: list[CitedSentence] = []
    resolved = dangling = 0
    over = False
    budget = MAX_MARKERS
    for citation in citations:
        named = len(citation.chunk_ids) + len(citation.ranks)
        if not named:
            continue  # names nothing: no citation
        if not budget:  # the schema allows 256 citations of 512 names each: the first MAX_MARKERS are read
            over = True
            break
        markers: list[Marker] = [(chunk_id, resolver.chunk_id(chunk_id)) for chunk_id in citation.chunk_ids[:budget]]
        markers += [(str(rank), resolver.rank(rank)) for rank in citation.ranks[:budget - len(markers)]]
        over = over or named > len(markers)
        budget -= len(markers)
        sentences.append(_cited((citation.text or "").strip(), markers))
        found, missing = _counts(markers)
        resolved += found
        dangling += missing
    return Citations(tuple(sentences), 0, resolved, dangling, over) if sentences else None


def event_citations(event: TraceEvent) -> Citations | None:
    """The event's structured citations when it carries them (`citations`; [] says it cites nothing), else
    those parse_citations finds in its answer."""
    if event.citations is not None:
        return structured_citations(event.citations, [chunk.id for chunk in event.chunks or ()])
    if not may_cite(event.answer):  # before the chunk ids are gathered: this is every answer's cost
        return None
    return parse_citations(event.answer, [chunk.id for chunk in event.chunks or ()])


class CitationMetrics:
    """Citation counts, labelled like the fast path's families."""

    def __init__(self, registry: CollectorRegistry, labels: list[str]) -> None:
        self.citation_answers = CounterFamily(
            "ragpulse_citation_answers_total",
            "Answers (not fallbacks) by whether they cite any source: cited true or false.",
            [*labels, "cited"], registry)
        self.citation_sentences = CounterFamily(
            "ragpulse_citation_sentences_total",
            "Sentences of answers that cite, by kind: cited, uncited (inline markers only).",
            [*labels, "kind"], registry)
        self.citations = CounterFamily(
            "ragpulse_citations_total",
            "Citation markers by outcome: resolved (names a retrieved chunk), dangling (names none).",
            [*labels, "outcome"], registry)
        # Answers, not markers: one answer past the cap could have 100,000, and they are not read.
        self.citation_answers_over_cap = CounterFamily(
            "ragpulse_citation_answers_over_cap_total",
            f"Answers with more than {MAX_MARKERS} citation markers: read up to the {MAX_MARKERS}th, the rest neither "
            "resolved nor dangling.",
            labels, registry)


class _Series:
    """One label set's counters, made together so that every rate is 0 rather than absent."""

    __slots__ = ("cited", "not_cited", "cited_sentences", "uncited_sentences", "resolved", "dangling",
                 "over_cap")

    def __init__(self, metrics: CitationMetrics, labels: tuple[str, ...]) -> None:
        self.cited: FastCounter = metrics.citation_answers.labels(*labels, "true")
        self.not_cited: FastCounter = metrics.citation_answers.labels(*labels, "false")
        self.cited_sentences: FastCounter = metrics.citation_sentences.labels(*labels, "cited")
        self.uncited_sentences: FastCounter = metrics.citation_sentences.labels(*labels, "uncited")
        self.resolved: FastCounter = metrics.citations.labels(*labels, "resolved")
        self.dangling: FastCounter = metrics.citations.labels(*labels, "dangling")
        self.over_cap: FastCounter = metrics.citation_answers_over_cap.labels(*labels)


class CitationScorer:
    """Pipeline stage: counts every answer's citations (not a fallback's, whose citations are no answer's)."""

    def __init__(self, registry: CollectorRegistry, guard: LabelGuard, *, max_label_sets: int = 2_000) -> None:
        metrics = CitationMetrics(registry, list(guard.names))  # labelled as the guard admits
        guard.on_new_label_set(lambda labels: _Series(metrics, labels))  # at zero when the label set is new
        # The stage in the compiled core, its label sets' counters cached there by raw label values (bounded);
        # structured citations and a new label set's counters come back here.
        self._core = CitationCore(TraceEvent, list(guard.names), 4 * max_label_sets, structured=event_citations,
                                  series=lambda raw: _Series(metrics, guard.admit(raw)[0]))
        self.direct = self._core.process  # what the pipeline's loop calls (collector/pipeline.py)

    def __call__(self, envelope: Envelope) -> Envelope:
        """Counts the answer's citations (not a fallback's); its text without inline markers goes on the envelope for
        the lexical scorer ("[1]" is no number). In the compiled core (native/src/citations/stage.rs)."""
        return self._core.process(envelope)
