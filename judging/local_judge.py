"""The local judge: claim-level verdicts without an LLM, for when no LLM judge is configured.

It fills every judgment series on a fresh machine, with `judge="local"` on them so nobody mistakes
them for an LLM's, and it is the judge of `judge.mode: local`. Like the LLM judge it returns the
answer's claims, each with a verdict and its evidence (docs/judging.md, The local judge):

1. the answer is split into clauses (scorers/text.py); clauses of conversation are no claims;
2. each claim is aligned with the chunk clause that shares most of its terms (Dice of the term
   sets, quantities counted as terms);
3. its verdict, the first rule that holds:
   - contradicted: a quantity without an equal in the context where the aligned clause has one of
     the same dimension (two weeks = 14 days is equal); the opposite polarity of every clause that
     aligns as well; a term found only where the context negates it; a near copy of the aligned
     clause with one thing swapped for another that the context says elsewhere, never with it;
   - not_in_context: a quantity or a name the context does not have (in any case or position), or
     under half of its terms supported (claims of two terms or fewer are too short to call unsupported: score 3);
   - supported, with the share of its terms found;
4. groundedness is the weakest claim's: 1 with a contradiction, 2 with a claim not in the context
   (<= 2 is a hallucination, as for the LLM judge), 3 under 60% supported, 4 under 80%, else 5.

Relevancy respects grounding: an answer whose supported claims come from a chunk relevant to the
question is relevant even when it repeats none of the question's words. The chunks that support a
claim are the ones the answer used (context utilisation). A cited sentence is judged the same way
against the chunks it cites alone: support from another chunk is a wrong citation. An agent's searches
are scored by the share of the question's terms the best of them carries. Every text is examined up
to MAX_CHARS characters; chunk analyses are cached by text, capped in entries and bytes.
"""

from __future__ import annotations

import re
import sys
import time
from collections import OrderedDict
from collections.abc import Sequence
from difflib import SequenceMatcher
from itertools import repeat

import msgspec
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from ragpulse._native import ClauseIndex, align_claim
from ragpulse.collector.events import TraceEvent
from ragpulse.judging.llm_judge import judged_citations, set_citation_verdicts
from ragpulse.judging.verdicts import Claim, Judgment
from ragpulse.scorers.citations import Citations, event_citations, strip_markers
from ragpulse.scorers.text import (Clause, clause, clauses, is_chatter, name_stems, question_terms, sentences, size,
                                   supported_units)

# v2: names in any case and position, preambles and 7 天; v3: uncertain claims, governed negation, numbers in
# words, wrong subjects (docs/benchmarks-log.md); v4: citation markers ("[1]") are no claims. Calibration is per
# version: a new one starts uncalibrated.
PROMPT_VERSION = "claims.v4"
MAX_CHARS = 4_000  # of an answer, a question or a chunk: longer texts are judged on their start
_SUPPORTED_AT_LEAST = 0.5  # share of a claim's terms in the context
_ALIGNED_AT_LEAST = 0.5  # share of a claim's terms in its aligned clause, for a polarity or swap verdict
_AS_WELL = 0.1  # clauses within this Dice of the best align as well
_SWAP_ALIGNED_AT_LEAST = 0.75  # a claim this close to its aligned clause that differs in a thing replaced it
_SWAP_MAX_TOKENS = 3  # words (or characters) replaced at most, for a substitution
_SWAP_MAX_TERMS = 4  # terms that differ at most (three characters replaced change up to four bigrams)
_TOO_SHORT_UNITS = 2  # a claim of this few terms, none a quantity or a name, is not called unsupported
# A model's preamble before what it was asked for: no claim about the context.
_PREAMBLE = re.compile(r"^\s*(?:here(?:'s|’s| is| are)|below is|the following is)\b[^\n:]{0,200}:\s*", re.IGNORECASE)

_DEMONYM_ENDINGS = ("ian", "ean", "ese", "ern", "ish", "an", "es", "ic")  # of stems: belgian, chines, western
_CAPITALISED = re.compile(r"\b[A-Z][A-Za-z0-9+]+")
_LIST_MARKER = re.compile(r"\(?\d{1,2}[.)]?")  # "1." of a numbered list is no claim


class ChunkAnalysis(msgspec.Struct, frozen=True, gc=False):
    sentences: tuple[tuple[Clause, ...], ...]  # each sentence as its clauses
    clauses: tuple[Clause, ...]  # the same, flat
    index: ClauseIndex  # a term or a quantity -> the clauses (flat) that have it, in the crate (the alignment's)
    terms: frozenset[str]  # of all its clauses
    chars: frozenset[str]
    quantities: frozenset[tuple[str, float]]
    names: frozenset[str]
    spelled: frozenset[tuple[str, float]]
    topic: frozenset[str]  # question_terms() of the chunk, for its relevance to a question
    negated: frozenset[str]  # the terms its negated clauses negate
    affirmed: frozenset[str]  # the terms of its clauses that are not negated


def _analyse(text: str) -> ChunkAnalysis:
    grouped = tuple(tuple(clause(part) for part in clauses(sentence)) for sentence in sentences(text[:MAX_CHARS]))
    parsed = tuple(c for sentence in grouped for c in sentence)
    return ChunkAnalysis(
        grouped,
        parsed,
        ClauseIndex([(c.terms, c.quantities) for c in parsed]),
        frozenset().union(*(c.terms for c in parsed)),
        frozenset().union(*(c.chars for c in parsed)),
        frozenset().union(*(c.quantities for c in parsed)),
        frozenset().union(*(c.names for c in parsed)),
        frozenset().union(*(c.spelled for c in parsed)),
        question_terms(text[:MAX_CHARS]),
        frozenset().union(*(c.governed or c.terms for c in parsed if c.negated)),
        frozenset().union(*(c.terms for c in parsed if not c.negated)),
    )


def _chunk_relevance(coverage: float) -> int:
    """The share of the question's terms in a chunk to the 0-3 scale (2 and up: relevant)."""
    return 3 if coverage >= 0.5 else 2 if coverage >= 0.3 else 1 if coverage > 0 else 0


def _share_score(share: float) -> int:
    return 5 if share >= 0.5 else 4 if share >= 0.3 else 3 if share >= 0.15 else 2 if share > 0 else 1


def _describe(quantity: tuple[str, float]) -> str:
    dimension, value = quantity
    return f"{value:g} ({dimension})" if dimension not in ("duration", "rate") else f"{value:g} minutes ({dimension})"


_NOTHING = clause("")  # the aligned clause of a claim that shares no term with the context


class _Context(msgspec.Struct, gc=False):
    """A trace's chunks as the judge reads them."""

    candidates: list[tuple[int, Clause]]  # every chunk clause, with its chunk's index
    located: list[tuple[int, ClauseIndex]]  # each chunk's index, with the offset of its clauses in candidates
    statements: list[tuple[Clause, ...]]  # the chunks' sentences, as their clauses
    context: Clause  # the union of everything the chunks say
    only_negated: frozenset[str]  # terms the chunks only ever say negated

    def holding(self, key: str | tuple[str, float]) -> list[int]:
        """Positions in `candidates` of the clauses that have this term or quantity."""
        return [offset + position for offset, index in self.located for position in index.positions(key)]

    def aligned(self, claim: Clause) -> tuple[float, int, list[int]] | None:
        """The claim's best aligned clause, by the Dice of their terms and quantities (the first of equals):
        (its Dice, its position in `candidates`, the positions of those within _AS_WELL of it); None when no
        clause shares a term or a quantity with the claim. Counted in the crate (native/src/align.rs): in
        Python this was most of a judgment on recurring chunks."""
        return align_claim(claim.terms, claim.quantities, self.located, _AS_WELL)


def _where(chunks: Sequence[ChunkAnalysis | None]) -> _Context | None:
    """The chunks with text as the judge reads them (indices kept), or None when none has text."""
    known = [c for c in chunks if c is not None]
    if not known:
        return None
    context = Clause("", frozenset().union(*(c.terms for c in known)), frozenset(), (),
                     frozenset().union(*(c.chars for c in known)), (), frozenset().union(*(c.quantities for c in known)),
                     frozenset().union(*(c.names for c in known)), False,
                     spelled=frozenset().union(*(c.spelled for c in known)))
    located: list[tuple[int, ClauseIndex]] = []
    candidates: list[tuple[int, Clause]] = []
    for index, chunk in enumerate(chunks):
        if chunk is not None:
            located.append((len(candidates), chunk.index))
            candidates.extend(zip(repeat(index), chunk.clauses))
    statements = [sentence for chunk in known for sentence in chunk.sentences]
    negated = frozenset().union(*(c.negated for c in known))
    only_negated = negated.difference(*(c.affirmed for c in known)) if negated else negated
    return _Context(candidates, located, statements, context, only_negated)


def _search_relevance(judgment: Judgment, searches: Sequence[str] | None, question: frozenset[str]) -> None:
    """An agent's searches against the user's question: the share of its terms the best search carries."""
    if not searches or not question:
        return
    shares = [(len(question & question_terms(search[:MAX_CHARS])) / len(question), search) for search in searches]
    share, best = max(shares, key=lambda scored: scored[0])
    judgment.search_relevance = _share_score(share)
    judgment.search_relevance_reason = f"the best search ({best[:120]!r}) has {share:.0%} of the question's terms"


class _Verdict(msgspec.Struct, gc=False):
    claim: Claim
    score: int
    chunk: int | None  # the aligned clause's chunk, when supported
    confidence: float  # in the verdict, 0-1: how much of the claim the evidence covers (docs/judging.md, The local judge)


def _footprint(analysis: ChunkAnalysis) -> int:
    """An upper estimate of what a cached analysis holds, in bytes (shared strings counted each time)."""
    parsed = analysis.clauses
    total = (sys.getsizeof(analysis) + sum(map(sys.getsizeof, analysis.sentences)) + sys.getsizeof(analysis.sentences)
             + sys.getsizeof(parsed) + sys.getsizeof(analysis.index))
    for part in (*parsed, analysis):
        for field in ("terms", "chars", "quantities", "names") + (("words",) if isinstance(part, Clause)
                                                                  else ("topic", "negated", "affirmed")):
            items = getattr(part, field)
            total += sys.getsizeof(items) + sum(map(sys.getsizeof, items))
        if isinstance(part, Clause):
            total += (sys.getsizeof(part) + sys.getsizeof(part.text) + sum(map(sys.getsizeof, part.cjk_parts))
                      + sys.getsizeof(part.sequence))
    return total


def _opposed(claim: Clause, other: Clause) -> bool:
    """Opposite polarity about the same thing: the negation governs words the other clause says (at least
    half of them) and does not negate too, or it is Chinese, where the whole clause is negated. "The mine
    never had active mining again" does not contradict "the Pike mine is in Utah"; "is not covered by the
    warranty" contradicts "the warranty covers it"; "he can't hide that he doesn't want the belt" agrees
    with "he doesn't want the belt"."""
    if claim.negated == other.negated:
        return False
    negative, positive = (claim, other) if claim.negated else (other, claim)
    governed = negative.governed
    if not governed:
        return True
    said = governed & positive.terms
    return 2 * len(said) >= len(governed) and bool(said - positive.governed)


def _demonym_of(name: str, context: Clause) -> bool:
    """Belgian clubs for clubs in Belgium, Chinese cities for China, Western Australia for west Australian:
    the name's stem without a demonym ending opens a term of the context ("belg" in "belgium")."""
    for ending in _DEMONYM_ENDINGS:
        if name.endswith(ending) and len(name) - len(ending) >= 4:
            root = name[: -len(ending)]
            return any(term.startswith(root) for term in context.terms)
    return False


def _kind(quantity: tuple[str, float]) -> tuple[str, bool]:
    """A quantity's dimension, years apart from other counts: 1874 rivals 1865, not a 27-year-old."""
    dimension, value = quantity
    return dimension, dimension == "count" and 1000 <= value <= 2100 and value.is_integer()


def _wrong_subject(claim: Clause, aligned: Clause,
                   statements: Sequence[tuple[Clause, ...]]) -> tuple[tuple[str, float], list[tuple[str, float]]] | None:
    """A quantity the context has, given to the wrong subject: "Dartmouth was founded in 1636" where the
    clause about Dartmouth says 1769 and 1636 is only ever said without Dartmouth (of Harvard)."""
    # One attribute, the rest of the claim the aligned clause's words: several quantities belong to several things.
    if len(claim.quantities) != 1 or not claim.terms or len(claim.terms - aligned.terms) * 4 > len(claim.terms):
        return None
    subject = (claim.names | _opening_names(claim)) & aligned.terms
    if not subject:
        return None
    for quantity in sorted(claim.quantities - aligned.quantities):
        rivals = [q for q in sorted(aligned.quantities) if _kind(q) == _kind(quantity)]
        if not rivals:
            continue
        holders = [frozenset().union(*(c.terms for c in statement)) for statement in statements
                   if any(quantity in c.quantities for c in statement)]
        if holders and any(not any(name in terms for terms in holders) for name in subject):
            return quantity, rivals
    return None


def _opening_names(claim: Clause) -> set[str]:
    return {stem for word in _CAPITALISED.findall(claim.text) for stem in name_stems(word)}


def _spell(tokens: Sequence[str]) -> str:
    return "".join(tokens) if all(len(t) == 1 and t > "\u33ff" for t in tokens) else " ".join(tokens)


def _substitution(claim: Clause, aligned: Clause, statements: Sequence[tuple[Clause, ...]]) -> tuple[str, str] | None:
    """The aligned clause word for word but for one span replaced by words the context says in another
    statement, never in the same one: the Munich store's hours given as the Berlin store's, 上海门店
    for 北京门店, standard shipping's price given as express shipping's. `statements` are the chunks'
    sentences as their clauses."""
    if not _one_span_apart(claim.sequence, aligned.sequence):
        return None
    changes = [op for op in SequenceMatcher(None, claim.sequence, aligned.sequence, autojunk=False).get_opcodes()
               if op[0] != "equal"]
    if len(changes) != 1 or changes[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = changes[0]
    # one thing for another is a span of about the same length ("use" for "tracking: every shipped
    # order has" is a rewording)
    if max(i2 - i1, j2 - j1) > _SWAP_MAX_TOKENS or abs((i2 - i1) - (j2 - j1)) > 1 or len(claim.sequence) - (i2 - i1) < 2:
        return None
    moved, replaced = _spell(claim.sequence[i1:i2]), _spell(aligned.sequence[j1:j2])
    if len(moved) < 2 or len(replaced) < 2:  # one character (内 for 支持) is no thing of its own
        return None
    said = [any(_says(c, moved) for c in statement) for statement in statements]
    together = any(any(_says(c, replaced) for c in statement) for statement, has in zip(statements, said) if has)
    return (moved, replaced) if any(said) and not together else None


def _one_span_apart(claim: Sequence[str], aligned: Sequence[str]) -> bool:
    """Whether the two can be one replaced span of at most _SWAP_MAX_TOKENS apart: what they share around the
    span is a common start and a common end, so the longest common start and end must leave no more than that of
    either. A necessary condition only, checked before the matcher (which it spares most clauses)."""
    shortest = min(len(claim), len(aligned))
    start = next((i for i in range(shortest) if claim[i] != aligned[i]), shortest)
    end = next((i for i in range(shortest) if claim[-1 - i] != aligned[-1 - i]), shortest)
    return max(len(claim), len(aligned)) - start - end <= _SWAP_MAX_TOKENS


def _says(parsed: Clause, spelled: str) -> bool:
    """Whether a clause has these words (English stems) or these characters in a row (CJK)."""
    if " " in spelled or spelled in parsed.words:
        return all(word in parsed.words for word in spelled.split(" "))
    return spelled in "".join(parsed.cjk_parts)


class LocalJudgeMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.duration = Histogram(
            "ragpulse_local_judge_duration_seconds", "Time the local judge took for one trace (claims, alignment, verdicts).",
            buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05), registry=registry,
        )
        self.cache_evicted = Counter(
            "ragpulse_local_judge_chunk_cache_evicted_total",
            "Chunk analyses the local judge dropped for its entry or byte cap (least recently used first).", registry=registry,
        )
        self.cache_entries = Gauge("ragpulse_local_judge_chunk_cache_entries", "Chunk analyses the local judge holds.",
                                   registry=registry)
        self.cache_bytes = Gauge("ragpulse_local_judge_chunk_cache_bytes",
                                 "Estimated bytes of the chunk analyses the local judge holds.", registry=registry)


class LocalJudge:
    model = "local"
    prompt_version = PROMPT_VERSION

    def __init__(self, registry: CollectorRegistry, *, cache_entries: int, cache_max_bytes: int) -> None:
        self._metrics = LocalJudgeMetrics(registry)
        self._cache: OrderedDict[str, tuple[ChunkAnalysis, int]] = OrderedDict()
        self._cache_entries = cache_entries
        self._cache_max_bytes = cache_max_bytes
        self._cache_bytes = 0

    def judge(self, event: TraceEvent) -> Judgment:
        started = time.perf_counter()
        judgment = self._judge(event)
        self._metrics.duration.observe(time.perf_counter() - started)
        return judgment

    def _judge(self, event: TraceEvent) -> Judgment:
        judgment = Judgment(trace_id=event.trace_id, judge_model=self.model, prompt_version=self.prompt_version)
        chunks = [self._chunk(c.text) if c.text is not None else None for c in event.chunks or []]
        question = question_terms(event.query[:MAX_CHARS])
        coverage = [len(question & c.topic) / len(question) if c is not None and question else 0.0 for c in chunks]
        judgment.chunk_relevance = [_chunk_relevance(share) if c is not None else None for c, share in zip(chunks, coverage)]
        # Only traces with chunk texts reach a judge (the sampler judges nothing else).
        where = _where(chunks)
        if where is None:
            judgment.error = "no_chunk_text"
            return judgment
        cited = event_citations(event)
        answer = event.answer if cited is None else strip_markers(event.answer)
        verdicts = [self._verdict(claim, where) for claim in self._claims(answer)]
        judgment.claims = [v.claim for v in verdicts]
        judgment.used_chunks = sorted({v.chunk for v in verdicts if v.chunk is not None})
        if cited is not None:
            set_citation_verdicts(judgment, cited, self._citation_checks(cited, chunks))
        _search_relevance(judgment, event.retrieval_queries, question)
        if not verdicts:
            judgment.groundedness, judgment.groundedness_reason = 5, "the answer makes no claim to check"
            judgment.confidence = 1.0
        else:
            weakest = min(verdicts, key=lambda v: (v.score, v.confidence))
            judgment.groundedness = weakest.score
            judgment.confidence = weakest.confidence
            counts = {verdict: sum(v.claim.verdict == verdict for v in verdicts)
                      for verdict in ("supported", "contradicted", "not_in_context", "uncertain")}
            judgment.groundedness_reason = (
                f"{counts['supported']} of {len(verdicts)} claims supported, {counts['contradicted']} contradicted, "
                f"{counts['not_in_context']} not in the context, {counts['uncertain']} uncertain"
                + (f"; weakest: {weakest.claim.claim!r}: {weakest.claim.reason}" if weakest.score < 5 else "")
            )
        self._relevancy(judgment, event.answer, question, coverage, verdicts)
        if question:
            judgment.context_relevance_reason = f"the best chunk has {max(coverage, default=0.0):.0%} of the question's terms"
        return judgment

    def _citation_checks(self, cited: Citations, chunks: list[ChunkAnalysis | None]) -> dict[int, tuple[str, str]]:
        """Each judged cited sentence's claims against the chunks it cites, and only those: (verdict, reason) by
        its index among those that cite a retrieved chunk."""
        checks: dict[int, tuple[str, str]] = {}
        for index, sentence in enumerate(s for s in judged_citations(cited) if s.chunks):
            where = _where([c if i in sentence.chunks else None for i, c in enumerate(chunks)])
            verdicts = [self._verdict(claim, where) for claim in self._claims(sentence.sentence)] if where else []
            faults = [v for v in verdicts if v.claim.verdict in ("contradicted", "not_in_context")]
            if where is None:
                checks[index] = ("uncertain", "the cited chunks have no text")
            elif faults:
                checks[index] = ("unsupported", f"against the cited chunks: {faults[0].claim.reason}")
            elif any(v.claim.verdict == "uncertain" for v in verdicts):
                checks[index] = ("uncertain", "the cited chunks hold too little of it to tell")
            else:
                checks[index] = ("supported", "the cited chunks support every claim of it")
        return checks

    def _claims(self, answer: str) -> list[Clause]:
        answer = _PREAMBLE.sub("", answer[:MAX_CHARS], count=1)  # "Here is a summary of the passage:" claims nothing
        parsed = [clause(part) for part in clauses(answer)]
        return [c for c in parsed if (c.terms or c.quantities) and not is_chatter(c) and not _LIST_MARKER.fullmatch(c.text)]

    @staticmethod
    def _verdict(claim: Clause, where: _Context) -> _Verdict:
        """The claim against the chunk clauses that share a term with it, the chunks' sentences and the
        whole context."""
        units = size(claim)
        candidates, context = where.candidates, where.context
        # in order, as every set a reason names: a set's order changes with the process's hash seed
        missing_quantities = sorted(claim.quantities - context.quantities - context.spelled)
        alignment = where.aligned(claim)
        best_dice, best, as_well = alignment if alignment is not None else (0.0, None, [])
        best_chunk, aligned = candidates[best] if best is not None else (None, _NOTHING)

        aligned_share = supported_units(claim, aligned) / units
        share = supported_units(claim, context) / units

        def verdict(kind: str, reason: str, score: int, chunk: int | None = None) -> _Verdict:
            evidence = f' (context: "{aligned.text}")' if best_dice > 0 else ""
            # A contradiction is surer the closer the claim copies the clause it contradicts; a missing name or
            # number the more of the rest the context supports; a claim with nothing in the context the longer
            # it is; support (and abstention) as sure as the share of the claim's terms found.
            confidence = (0.5 + min(aligned_share, 1.0) / 2 if kind == "contradicted"
                          else 0.5 + min(units, 10) / 20 if kind == "not_in_context" and share == 0
                          else 0.5 + min(share, 1.0) / 2 if kind == "not_in_context" else min(share, 1.0))
            return _Verdict(Claim(claim.text, kind, reason + evidence, [] if chunk is None else [chunk]),  # type: ignore[arg-type]
                            score, chunk, round(confidence, 3))

        for quantity in missing_quantities:
            rivals = [q for q in sorted(aligned.quantities) if q[0] == quantity[0]]
            if rivals:
                return verdict("contradicted", f"says {_describe(quantity)} where the context says "
                               f"{', '.join(map(_describe, rivals))}", 1)
        if (misplaced := _wrong_subject(claim, aligned, where.statements)) is not None:
            quantity, rivals = misplaced
            return verdict("contradicted", f"says {_describe(quantity)} where the context says "
                           f"{', '.join(map(_describe, rivals))}; {_describe(quantity)} is said of something else", 1)
        if aligned_share >= _ALIGNED_AT_LEAST:
            if all(_opposed(claim, candidates[p][1]) for p in as_well):
                return verdict("contradicted", "the context says the opposite", 1)
            # a term the aligned clause lacks, found only where the context negates it (注销账号后订单记录
            # 可以恢复 against 注销账号后订单记录将被永久删除，无法恢复); a negated claim is checked above
            for term in () if claim.negated else sorted((claim.terms - aligned.terms) & where.only_negated):
                holders = [candidates[p][1] for p in where.holding(term)]
                if all(len(c.terms & claim.terms) * 2 >= len(c.terms) for c in holders):
                    return verdict("contradicted", f'the context says the opposite: "{holders[0].text}"', 1)
        if (aligned_share >= _SWAP_ALIGNED_AT_LEAST and 0 < len(claim.terms - aligned.terms) <= _SWAP_MAX_TERMS
                and 0 < len(aligned.terms - claim.terms) <= _SWAP_MAX_TERMS
                and (swap := _substitution(claim, aligned, where.statements))):
            moved, replaced = swap
            return verdict("contradicted", f"says {moved} where the context says {replaced}", 1)
        if missing_quantities:
            return verdict("not_in_context", f"{', '.join(map(_describe, missing_quantities))} is not in the context", 2)
        # A name is in the context in any case and any position (names are lower-cased terms too): a lower-case
        # source, or a sentence that opens with the name, is no reason to call it missing.
        missing_names = {name for name in claim.names - context.names - context.terms if not _demonym_of(name, context)}
        if units <= _TOO_SHORT_UNITS:  # "Scotland.": a short answer's opening word is a name too
            missing_names.update(name for name in _opening_names(claim) - context.terms if not _demonym_of(name, context))
        if missing_names:
            return verdict("not_in_context", f"the context does not mention {', '.join(sorted(missing_names))}", 2)
        if share == 0 and units > _TOO_SHORT_UNITS:  # no evidence at all is not weak evidence
            return verdict("not_in_context", f"none of its {units} terms is in the context", 2)
        if share < _SUPPORTED_AT_LEAST:
            # Weak lexical evidence either way: a paraphrase and an invention look alike here, so the judge
            # abstains (score 3, no hallucination) rather than cry wolf.
            return verdict("uncertain", f"{share:.0%} of its {units} terms are in the context: too little to call "
                           "it supported, nothing specific to call it unsupported", 3)
        score = 5 if share >= 0.8 else 4 if share >= 0.6 else 3
        return verdict("supported", f"{share:.0%} of its terms are in the context", score, best_chunk)

    @staticmethod
    def _relevancy(judgment: Judgment, answer: str, question: frozenset[str], coverage: list[float],
                   verdicts: list[_Verdict]) -> None:
        if not question:
            return
        lexical = len(question & question_terms(answer[:MAX_CHARS])) / len(question)
        relevancy, reason = _share_score(lexical), f"{lexical:.0%} of the question's terms are in the answer"
        grounded = [coverage[v.chunk] for v in verdicts if v.chunk is not None]
        if grounded and _chunk_relevance(max(grounded)) >= 2:
            via_chunk = 5 if _chunk_relevance(max(grounded)) == 3 else 4
            if via_chunk > relevancy:
                relevancy = via_chunk
                reason = f"its supported claims come from a chunk with {max(grounded):.0%} of the question's terms"
        judgment.answer_relevancy, judgment.answer_relevancy_reason = relevancy, reason

    def _chunk(self, text: str) -> ChunkAnalysis:
        """A chunk's analysis, cached by its text: a knowledge base's chunks are retrieved again and again."""
        cached = self._cache.get(text)
        if cached is not None:
            self._cache.move_to_end(text)
            return cached[0]
        analysis = _analyse(text)
        footprint = _footprint(analysis) + sys.getsizeof(text)
        self._cache[text] = (analysis, footprint)
        self._cache_bytes += footprint
        while len(self._cache) > self._cache_entries or self._cache_bytes > self._cache_max_bytes:
            self._cache_bytes -= self._cache.popitem(last=False)[1][1]
            self._metrics.cache_evicted.inc()
        self._metrics.cache_entries.set(len(self._cache))
        self._metrics.cache_bytes.set(self._cache_bytes)
        return analysis
