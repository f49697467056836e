"""The local judge: claim-level verdicts without an LLM, for when no LLM judge is configured.

It fills every judgment series on a fresh machine, with `judge="local"` on them so nobody mistakes
them for an LLM's, and it is the judge of `judge.mode: local`. Like the LLM judge it returns the
answer's claims, each with a verdict and its evidence (docs/judging.md, The local judge):

1. the answer, as the user is told it (a JSON document's told fields: scorers/structured_output.py; SSML markup read
   as spoken: scorers/speech_markup.py), is split into clauses (scorers/text.py);
   clauses of conversation, a preamble and clauses that refuse (scorers/refusal.py) are no claims: an answer of
   refusals only is a refusal, never a hallucination;
2. each claim is aligned with the chunk clause that shares most of its terms (Dice of the term
   sets, quantities counted as terms);
3. its verdict, the first rule that holds:
   - contradicted: a quantity without an equal in the context where the aligned clause has one of
     the same dimension (two weeks = 14 days is equal); the opposite polarity of every clause that
     aligns as well; a term found only where the context negates it; a near copy of the aligned
     clause with one thing swapped for another that the context says elsewhere, never with it;
   - not_in_context: a quantity or a name the context does not have (in any case or position), none of its
     terms, under a fifth of them (a claim of five or more), or under half of an addition ("also", 也);
   - uncertain: under half of its terms supported, nothing specific missing;
   - supported, with the share of its terms found;
4. the answer's verdict is not the weakest claim's: a logistic model (judging/judge_model.py, fitted on public
   human-labelled benchmarks) reads the claims' evidence (judging/judge_features.py: their support shares, the
   rules that faulted them) as the probability that the answer is unsupported; a hallucination above its
   threshold, uncertain in a narrow band around it, grounded below; groundedness 1-5 from the probability
   (<= 2 a hallucination, as for the LLM judge). The claims keep their verdicts for the record.

Relevancy respects grounding: an answer whose supported claims come from a chunk relevant to the
question is relevant even when it repeats none of the question's words. The chunks that support a
claim are the ones the answer used (context utilisation). A cited sentence is judged the same way
against the chunks it cites alone: support from another chunk is a wrong citation. An agent's searches
are scored by the share of the question's terms the best of them carries (only when one is not the question
itself: judging/verdicts.py searches_differ). Every text is examined up
to MAX_CHARS characters; chunk analyses are cached by text, capped in entries and bytes.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from itertools import repeat

import msgspec
from prometheus_client import CollectorRegistry, Gauge, Histogram

from ragpulse._native import ChunkContext, StemMemo, VerdictRules, topics_shared
from ragpulse.collector.telemetry.fast_metrics import CounterFamily
from ragpulse.collector.events import TraceEvent
from ragpulse.judging.chunk_analysis import MAX_CHARS, CachedChunk, ChunkAnalysis, ChunkCache
from ragpulse.judging.claims_nothing import ClaimsNothing, shipped
from ragpulse.judging.judge_features import ClaimEvidence, Rule, features
from ragpulse.judging.judge_model import JudgeModel, set_groundedness, shipped_model
from ragpulse.judging.llm_judge import judged_citations, set_citation_verdicts
from ragpulse.judging.substitution import substitution
from ragpulse.judging.verdicts import Claim, Judgment, searches_differ
from ragpulse.scorers.citations import Citations, event_citations, strip_markers
from ragpulse.scorers.lexical import groundedness
from ragpulse.scorers.asides import around_a_refusal
from ragpulse.scorers.declines import cued, says_so, weigh
from ragpulse.scorers.handoffs import hands_off, may_hand_off, numbers_of_its_own
from ragpulse.scorers.nothing_new import may_say_nothing, says_nothing_new
from ragpulse.scorers.refusal import read
from ragpulse.scorers.speech_markup import spoken
from ragpulse.scorers.structured_output import told
from ragpulse.scorers.text import Clause, analyser, clause, question_shared, question_terms

# What each version changed: docs/judging.md (the local judge's prompt version). Calibration is per version: a new
# one starts uncalibrated.
PROMPT_VERSION = "claims.v11"
_SUPPORTED_AT_LEAST = 0.5  # share of a claim's terms in the context
_ALIGNED_AT_LEAST = 0.5  # share of a claim's terms in its aligned clause, for a polarity or swap verdict
_AS_WELL = 0.1  # clauses within this Dice of the best align as well
_SWAP_ALIGNED_AT_LEAST = 0.75  # a claim this close to its aligned clause that differs in a thing replaced it
_SWAP_MAX_TERMS = 4  # terms that differ at most (three characters replaced change up to four bigrams)
_TOO_SHORT_UNITS = 2  # a claim of this few terms, none a quantity or a name, is not called unsupported
_LITTLE_SUPPORT = 0.2  # under this share of its terms, a claim of _LITTLE_SUPPORT_UNITS or more is not in the context
_LITTLE_SUPPORT_UNITS = 5
# A claim announced as an addition ("We also offer free home pickup", 也可以按原价回收): under half supported it is
# one, not a paraphrase
_ADDITION = re.compile(r"\b(?:also|as\s+well|additionally|in\s+addition|besides|moreover|furthermore|on\s+top\s+of\s+that)\b"
                       r"|\btoo\s*$|另外|此外|也|同时|并且|而且|还(?:可以|能|会|提供|支持|有)", re.IGNORECASE)
# A model's preamble before what it was asked for: no claim about the context.
# "Based on the provided passage, here is a concise summary…:", "According to the context, the key points are:" (a lead-in
# line that ends in a colon) too.
_SOURCE_LEAD = (r"(?:based\s+on|according\s+to|drawing\s+on|from|per)\s+(?:the\s+|this\s+|these\s+|your\s+)?"
                r"(?:provided\s+|given\s+|above\s+|retrieved\s+|available\s+)?(?:passage|context|documents?|text|information|"
                r"articles?|sources?|excerpts?|materials?|snippets?)\b")
_PREAMBLE = re.compile(rf"^\s*(?:(?:{_SOURCE_LEAD}[^\n:]{{0,200}}?,\s*)?(?:here(?:'s|’s| is| are)|below (?:is|are)|the "
                       rf"following (?:is|are))\b[^\n:]{{0,200}}:\s*|{_SOURCE_LEAD}[^\n:]{{0,200}}:[ \t]*(?:\n\s*|$))",
                       re.IGNORECASE)

# The rules that run after missing_quantity (judge_features.Rule's order): their claims' numbers are in the context
_NUMBERS_CHECKED = frozenset(("missing_name", "nothing", "addition", "little", "weak", "supported"))
_DEMONYM_ENDINGS = ("ian", "ean", "ese", "ern", "ish", "an", "es", "ic")  # of stems: belgian, chines, western
# what the crate's rules read, and when the swap rule will read a claim's Clause (given with it, not made again)
_RULES = VerdictRules(_DEMONYM_ENDINGS, _ALIGNED_AT_LEAST, _TOO_SHORT_UNITS, analyser(), _SWAP_ALIGNED_AT_LEAST,
                      _SWAP_MAX_TERMS)
_LIST_MARKER = re.compile(r"\(?\d{1,2}[.)]?")  # "1." of a numbered list is no claim
_LIST_MARKER_CHARS = 4  # the longest it matches: "(12)"
_MAX_HANDOFF_CLAIMS = 5  # a hand-off alone is a few clauses: a summary of many is spared reading them for one
# The stems of English words the judge remembers (native/src/clause/memo.rs: ~190 bytes a word with its stem): an
# answer's words are mostly its context's and the language's common words; stemming them was a third of a claim's
# analysis
STEM_MEMO_ENTRIES = 32_768
STEM_MEMO_BYTES = 8 * 1024 * 1024


def _chunk_relevance(coverage: float) -> int:
    """The share of the question's terms in a chunk to the 0-3 scale (2 and up: relevant)."""
    return 3 if coverage >= 0.5 else 2 if coverage >= 0.3 else 1 if coverage > 0 else 0


def _share_score(share: float) -> int:
    return 5 if share >= 0.5 else 4 if share >= 0.3 else 3 if share >= 0.15 else 2 if share > 0 else 1


def _describe(quantity: tuple[str, float]) -> str:
    dimension, value = quantity
    return f"{value:g} ({dimension})" if dimension not in ("duration", "rate") else f"{value:g} minutes ({dimension})"


_Alignment = tuple[float, int, list[int], str, int, int]  # ChunkContext.evidence's alignment
_Checked = tuple[float, float, _Alignment | None, list[tuple[str, float]],
                 tuple[Rule, tuple[str, float] | None, list[tuple[str, float]], str | None] | None, list[str]]


class _Claim(msgspec.Struct, gc=False):
    """A claim as the crate checked it (_Context.claims): its size, counts and `checked`; its Clause (scorers/text.py)
    made when a rule in Python first reads it (the swap, the refusal weighing: 3-9 µs a claim otherwise spent). A
    Struct: made in C, a third of a class with __init__'s time."""

    text: str
    units: int
    terms: int
    quantified: bool
    cjk: int  # its CJK characters
    counts: bool  # it has a number, in digits or words
    checked: _Checked
    given: Clause | None  # its Clause, once made

    def parsed(self) -> Clause:
        if self.given is None:
            self.given = clause(self.text)
        return self.given


class _Context:
    """A trace's chunks as the judge reads them: the crate's context of their analyses (native/src/chunk.rs), and the
    clauses a verdict reads, made as scorers/text.py's Clause when first read."""

    __slots__ = ("chunks", "owners", "stems", "_clauses", "_statements")

    def __init__(self, chunks: ChunkContext, owners: list[int], stems: StemMemo) -> None:
        self.chunks = chunks
        self.owners = owners  # each clause's chunk index, by its position
        self.stems = stems  # the judge's
        self._clauses: dict[int, Clause] = {}
        self._statements: list[tuple[Clause, ...]] | None = None

    def clause(self, position: int) -> Clause:
        found = self._clauses.get(position)
        if found is None:
            found = self._clauses[position] = Clause(*self.chunks.clause(position))
        return found

    def statements(self) -> list[tuple[Clause, ...]]:
        """The chunks' sentences, as their clauses."""
        if self._statements is None:
            start, self._statements = 0, []
            for size in self.chunks.sentences():
                self._statements.append(tuple(map(self.clause, range(start, start + size))))
                start += size
        return self._statements

    def beside(self, position: int | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The sequences of the clauses just before and just after this one in its chunk (empty at its ends)."""
        if position is None:
            return (), ()
        owner, near = self.owners[position], (position - 1, position + 1)
        before, after = (self.clause(p).sequence if 0 <= p < len(self.owners) and self.owners[p] == owner else ()
                         for p in near)
        return before, after

    def claims(self, texts: list[str], declining: bool) -> list[_Claim | None]:
        """The claims of these texts, analysed and checked in one crate call (native/src/verdict/bindings.rs: the
        evidence, the quantities and names the context lacks, a short claim's capitalised words' stems among them, the
        contradiction of the rules before the swap; its Clause when VerdictRules.claims gives it, else made when Python
        first reads it). None: no claim (no term nor quantity, or conversation)."""
        claims: list[_Claim | None] = []
        for text, found in zip(texts, _RULES.claims(self.chunks, texts, _AS_WELL, declining, self.stems), strict=True):
            claim: _Claim | None = None
            if found is not None:
                units, terms, quantified, cjk, counts, checked, fields = found
                claim = _Claim(text, units, terms, quantified, cjk, counts, checked,
                               None if fields is None else Clause(text, *fields))
            claims.append(claim)
        return claims


def _as_read(answer: str, cited: Citations | None) -> tuple[str, str, str | None]:
    """(the answer as the user is told it: a JSON document's told fields, SSML read as spoken; that without its
    citation markers, what the claims are read from; the JSON document's own decline, if any). Read so before
    anything reads the answer, once: the refusals _judged finds are taken out of this text (_lexical); the judge's
    claims are texts, no offsets into the answer."""
    structured = told(answer)
    said = spoken(answer if structured is None else structured.text)
    return said, said if cited is None else strip_markers(said), None if structured is None else structured.declines


def _where(chunks: Sequence[ChunkAnalysis | None], stems: StemMemo) -> _Context | None:
    """The chunks with text as the judge reads them (indices kept), or None when none has text."""
    known = [c for c in chunks if c is not None]
    if not known:
        return None
    owners: list[int] = []
    for index, chunk in enumerate(chunks):
        if chunk is not None:
            owners.extend(repeat(index, len(chunk)))
    return _Context(ChunkContext(known), owners, stems)


def _search_relevance(judgment: Judgment, searches: Sequence[str], question: frozenset[str]) -> None:
    """An agent's searches against the user's question: the share of its terms the best search carries."""
    if not question:
        return
    shares = [(len(question & question_terms(search[:MAX_CHARS])) / len(question), search) for search in searches]
    share, best = max(shares, key=lambda scored: scored[0])
    judgment.search_relevance = _share_score(share)
    judgment.search_relevance_reason = f"the best search ({best[:120]!r}) has {share:.0%} of the question's terms"


class _Verdict(msgspec.Struct, gc=False):
    """A claim's verdict as the answer reads it: its record, the chunk it came from, its evidence. No score nor
    confidence of its own: the answer's come from the model (judging/judge_model.py)."""

    claim: Claim
    chunk: int | None  # the aligned clause's chunk, when supported
    evidence: ClaimEvidence  # what decided it, for the answer's model (judging/judge_features.py)
    counts: bool  # the claim has a number, in digits or words (the lexical feature reads a checked one as words)


def _contradiction_reason(rule: Rule, quantity: tuple[str, float] | None, rivals: list[tuple[str, float]],
                          negating: str | None) -> str:
    """What a contradiction the crate's rules found says (native/src/verdict.rs)."""
    if quantity is None:
        return "the context says the opposite" if negating is None else f'the context says the opposite: "{negating}"'
    said = f"says {_describe(quantity)} where the context says {', '.join(map(_describe, rivals))}"
    return said if rule == "quantity" else f"{said}; {_describe(quantity)} is said of something else"


def _swap(claim: _Claim, where: _Context, best: int) -> tuple[str, str] | None:
    """The swap rule (judging/substitution.py) for a claim close to its aligned clause (at `best`) that differs in a
    few terms: the aligned clause's Clause made only then."""
    return substitution(claim.parsed(), where.clause(best), where.statements, lambda: where.beside(best))


def _verdict_of(claim: _Claim, alignment: _Alignment | None, share: float, kind: str, reason: str, rule: Rule,
                chunk: int | None = None) -> _Verdict:
    """A claim's verdict with its evidence (`share`: of its terms in the context) and the aligned clause it read."""
    evidence = f' (context: "{alignment[3]}")' if alignment is not None and alignment[0] > 0 else ""
    return _Verdict(Claim(claim.text, kind, reason + evidence, [] if chunk is None else [chunk]),  # type: ignore[arg-type]
                    chunk, ClaimEvidence(share, claim.units, claim.cjk, rule), claim.counts)


class LocalJudgeMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.duration = Histogram(
            "ragpulse_local_judge_duration_seconds", "Time the local judge took for one trace (claims, alignment, verdicts).",
            buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05), registry=registry,
        )
        self.stems_bytes = Gauge("ragpulse_local_judge_stem_memo_bytes",
                                 "Bytes the local judge's memo of English stems holds (its count, at most 8 MiB).",
                                 registry=registry)
        self.stems_evicted = CounterFamily(
            "ragpulse_local_judge_stem_memo_evicted_total",
            "English words' stems the local judge let go of for its caps (32,768 words, 8 MiB), oldest first: a word "
            "that recurs after is stemmed again.", [], registry,
        )


class LocalJudge:
    model = "local"
    prompt_version = PROMPT_VERSION

    def __init__(self, registry: CollectorRegistry, *, cache_entries: int, cache_max_bytes: int,
                 model: JudgeModel | None = None, claims_nothing: ClaimsNothing | None = None) -> None:
        """`model`: the answer's model, the shipped one (judging/model/) unless given (bench/train_local_judge.py
        measures the ones it fits); read when first needed, so that features() needs none. `claims_nothing`: the learned
        reading of clauses that claim nothing, the shipped one unless given (bench/train_claims_nothing.py)."""
        self._metrics = LocalJudgeMetrics(registry)
        self._model = model
        self._claims_nothing = claims_nothing or shipped()
        self._chunk = ChunkCache(registry, max_entries=cache_entries, max_bytes=cache_max_bytes)
        self._stems = stems = StemMemo(STEM_MEMO_ENTRIES, STEM_MEMO_BYTES, self._metrics.stems_evicted.labels())
        self._metrics.stems_bytes.set_function(lambda: stems.bytes)  # read when scraped

    def judge(self, event: TraceEvent) -> Judgment:
        started = time.perf_counter()
        judgment = self._judge(event)
        self._metrics.duration.observe(time.perf_counter() - started)
        return judgment

    def _judge(self, event: TraceEvent) -> Judgment:
        judgment = Judgment(trace_id=event.trace_id, judge_model=self.model, prompt_version=self.prompt_version)
        cached = [self._chunk(c.text) if c.text is not None else None for c in event.chunks or []]
        chunks = [c.analysis if c is not None else None for c in cached]
        question = question_terms(event.query[:MAX_CHARS])
        shared = iter(topics_shared([c for c in chunks if c is not None], question) if question else ())
        coverage = [next(shared) / len(question) if c is not None and question else 0.0 for c in chunks]
        judgment.chunk_relevance = [_chunk_relevance(share) if c is not None else None for c, share in zip(chunks, coverage)]
        # Only traces with chunk texts reach a judge (the sampler judges nothing else).
        where = _where(chunks, self._stems)
        if where is None:
            judgment.error = "no_chunk_text"
            return judgment
        cited = event_citations(event)
        said, answer, declines = _as_read(event.answer, cited)
        verdicts, refusals = self._judged(answer, where, event.query, declines)
        judgment.claims = [v.claim for v in verdicts]
        judgment.used_chunks = sorted({v.chunk for v in verdicts if v.chunk is not None})
        if cited is not None:
            set_citation_verdicts(judgment, cited, self._citation_checks(cited, chunks, event.query))
        if searches_differ(event.query, event.retrieval_queries):
            _search_relevance(judgment, event.retrieval_queries or [], question)
        if not verdicts and refusals:
            # claims nothing and declines: never a hallucination, its stage by the chunks' relevance (judging/exit.py)
            judgment.refusal, judgment.used_chunks = True, None
            judgment.groundedness_reason = f"a refusal, no claim to check: {refusals[0][:200]!r}"
        elif not verdicts:
            judgment.groundedness, judgment.groundedness_reason = 5, "the answer makes no claim to check"
            judgment.confidence, judgment.uncertain = 1.0, False
        else:
            set_groundedness(judgment, self._model or shipped_model(), [v.claim for v in verdicts],
                             [v.evidence for v in verdicts], _lexical(answer, cached, verdicts, refusals))
        self._relevancy(judgment, said, question, coverage, verdicts, self._stems)
        if question:
            judgment.context_relevance_reason = f"the best chunk has {max(coverage, default=0.0):.0%} of the question's terms"
        return judgment

    def features(self, event: TraceEvent) -> list[float] | None:
        """The vector the judge's model reads for this answer (judging/judge_features.py), as judge() computes it:
        None when no chunk has text or the answer makes no claim. What bench/train_local_judge.py fits on."""
        cached = [self._chunk(c.text) if c.text is not None else None for c in event.chunks or []]
        where = _where([c.analysis if c is not None else None for c in cached], self._stems)
        if where is None:
            return None
        answer, declines = _as_read(event.answer, event_citations(event))[1:]
        verdicts, refusals = self._judged(answer, where, event.query, declines)
        return features([v.evidence for v in verdicts], _lexical(answer, cached, verdicts, refusals)) if verdicts else None

    def _citation_checks(self, cited: Citations, chunks: list[ChunkAnalysis | None],
                         question: str) -> dict[int, tuple[str, str]]:
        """Each judged cited sentence's claims against the chunks it cites, and only those: (verdict, reason) by
        its index among those that cite a retrieved chunk."""
        checks: dict[int, tuple[str, str]] = {}
        for index, sentence in enumerate(s for s in judged_citations(cited) if s.chunks):
            where = _where([c if i in sentence.chunks else None for i, c in enumerate(chunks)], self._stems)
            verdicts = self._judged(spoken(sentence.sentence), where, question)[0] if where else []
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

    def _judged(self, answer: str, where: _Context, question: str,
                declines: str | None = None) -> tuple[list[_Verdict], list[str]]:
        """The answer's claims with their verdicts, and its clauses that refuse (scorers/refusal.py: "I couldn't find the
        exact policy" claims nothing, the "but …" after it is a claim). A clause that only looks like a refusal ("I
        can't promise a delivery day") refuses unless the context supports it; so do clauses in which the speaker
        declines in other words, and what is said around a refusal is no claim (scorers/declines.py)."""
        said = _PREAMBLE.sub("", answer[:MAX_CHARS], count=1)  # "Here is a summary of the passage:" claims nothing
        if said.isascii() and said.isupper() and len(said.split()) > 3 and cued(said):
            said = said.lower()  # shouted ("NO RESTOCK INFO HERE"): no capital marks a name
        reading = read(said)
        verdicts, refusals, weighed = [], list(reading.refusals), []
        # a JSON document that declines by itself (scorers/structured_output.py) is a cue and a refusal beside its text
        declining, question_clause = reading.cued or declines is not None, []  # the question's clause: made when first read

        def asked() -> Clause:
            if not question_clause:
                question_clause.append(clause(question[:MAX_CHARS]))
            return question_clause[0]

        said_claims = [(text, maybe) for text, maybe in zip(reading.claims, reading.maybe, strict=True)
                       if len(text) > _LIST_MARKER_CHARS or not _LIST_MARKER.fullmatch(text)]  # "1." is no claim
        for (text, maybe), claim in zip(said_claims, where.claims([t for t, _ in said_claims], declining), strict=True):
            if claim is None:
                continue
            in_context = not claim.quantified and claim.checked[0] > 0  # a claim with a number is weighed by none
            reading_of = weigh(text, claim.parsed(), asked, in_context=in_context) if declining and not claim.quantified else None
            if reading_of == "refusal":
                refusals.append(text)
                continue
            judged = self._verdict(claim, where)
            if (maybe and not says_so(text) or reading_of == "maybe") and judged.claim.verdict != "supported":
                refusals.append(text)
            else:
                verdicts.append(judged)
                weighed.append((claim, in_context))
        if declines is not None:
            refusals.append(declines)
        # a hand-off, read in an answer of a few claims that speaks to the asker (all supported: none to spare); a clause of
        # channels and process (scorers/nothing_new.py), beside a refusal, a hand-off or a cue, or in such an answer
        addressed = not refusals and any(v.claim.verdict != "supported" for v in verdicts) and may_hand_off(said)
        read_for_hand_offs = refusals or len(verdicts) <= _MAX_HANDOFF_CLAIMS and addressed
        handed = [hands_off(v.claim.claim, claim.quantified and numbers_of_its_own(claim.parsed(), asked()))
                  for v, (claim, _) in zip(verdicts, weighed, strict=True)] if read_for_hand_offs else [False] * len(verdicts)
        said_nothing = [v.claim.verdict != "supported" and may_say_nothing(v.claim.claim) and says_nothing_new(
            claim.parsed(), asked()) for v, (claim, _) in zip(verdicts, weighed, strict=True)] if (
            refusals or any(handed) or declining or addressed) else [False] * len(verdicts)
        if refusals or any(handed) or any(said_nothing):  # what is said around a refusal or a hand-off: no claims
            around = [hand or nothing or around_a_refusal(v.claim.claim, claim.parsed(), asked(), in_context=in_context)
                      for v, hand, nothing, (claim, in_context) in zip(verdicts, handed, said_nothing, weighed, strict=True)]
            if not refusals:  # handed on, and nothing else said: a refusal; anything else said, every clause a claim
                around = [all(around)] * len(verdicts)
            refusals += [v.claim.claim for v, aside in zip(verdicts, around, strict=True) if aside]
            verdicts = [v for v, aside in zip(verdicts, around, strict=True) if not aside]
        if declines is not None and all(v.claim.verdict == "uncertain" for v in verdicts):
            # the document declines and its text says nothing the context supports or lacks: why it declines, a refusal
            refusals += [v.claim.claim for v in verdicts]
            verdicts = []
        if self._claims_nothing.refuses(said, [v.claim.claim for v in verdicts], [v.claim.verdict for v in verdicts],
                                        bool(refusals)):
            return [], refusals + [v.claim.claim for v in verdicts]  # says it cannot answer, in words no rule reads
        return verdicts, refusals

    @staticmethod
    def _verdict(claim: _Claim, where: _Context) -> _Verdict:
        """The claim against the chunk clauses that share a term with it, the chunks' sentences and the whole
        context: what the crate's rules found (_Context.claims)."""
        supported, aligned_supported, alignment, missing_quantities, contradiction, missing_names = claim.checked
        units = claim.units
        share = supported / units
        if contradiction is not None:
            return _verdict_of(claim, alignment, share, "contradicted", _contradiction_reason(*contradiction),
                               contradiction[0])
        if (alignment is not None and aligned_supported / units >= _SWAP_ALIGNED_AT_LEAST
                and 0 < alignment[4] <= _SWAP_MAX_TERMS and 0 < alignment[5] <= _SWAP_MAX_TERMS
                and (swap := _swap(claim, where, alignment[1]))):
            moved, replaced = swap
            return _verdict_of(claim, alignment, share, "contradicted", f"says {moved} where the context says {replaced}",
                               "swap")
        if missing_quantities:
            return _verdict_of(claim, alignment, share, "not_in_context",
                               f"{', '.join(map(_describe, missing_quantities))} is not in the context", "missing_quantity")
        if missing_names:  # in no case or position, nor as a demonym ("Scotland." opens a short claim with one)
            return _verdict_of(claim, alignment, share, "not_in_context",
                               f"the context does not mention {', '.join(missing_names)}", "missing_name")
        if share == 0 and units > _TOO_SHORT_UNITS:  # no evidence at all is not weak evidence
            return _verdict_of(claim, alignment, share, "not_in_context", f"none of its {units} terms is in the context",
                               "nothing")
        if share < _SUPPORTED_AT_LEAST and units > _TOO_SHORT_UNITS and (added := _ADDITION.search(claim.text)):
            return _verdict_of(claim, alignment, share, "not_in_context", f"an addition ({added[0].strip()!r}) with "
                               f"{share:.0%} of its {units} terms in the context", "addition")
        if share < _LITTLE_SUPPORT and units >= _LITTLE_SUPPORT_UNITS:
            return _verdict_of(claim, alignment, share, "not_in_context",
                               f"only {share:.0%} of its {units} terms are in the context", "little")
        if share < _SUPPORTED_AT_LEAST:
            # Weak lexical evidence either way: a paraphrase and an invention look alike here, so the judge
            # abstains (uncertain, no hallucination) rather than cry wolf.
            return _verdict_of(claim, alignment, share, "uncertain", f"{share:.0%} of its {units} terms are in the "
                               "context: too little to call it supported, nothing specific to call it unsupported", "weak")
        best_chunk = where.owners[alignment[1]] if alignment is not None else None
        return _verdict_of(claim, alignment, share, "supported", f"{share:.0%} of its terms are in the context", "supported",
                           best_chunk)

    @staticmethod
    def _relevancy(judgment: Judgment, answer: str, question: frozenset[str], coverage: list[float],
                   verdicts: list[_Verdict], stems: StemMemo) -> None:
        if not question:
            return
        lexical = question_shared(question, answer[:MAX_CHARS], stems) / len(question)
        relevancy, reason = _share_score(lexical), f"{lexical:.0%} of the question's terms are in the answer"
        grounded = [coverage[v.chunk] for v in verdicts if v.chunk is not None]
        if grounded and _chunk_relevance(max(grounded)) >= 2:
            via_chunk = 5 if _chunk_relevance(max(grounded)) == 3 else 4
            if via_chunk > relevancy:
                relevancy = via_chunk
                reason = f"its supported claims come from a chunk with {max(grounded):.0%} of the question's terms"
        judgment.answer_relevancy, judgment.answer_relevancy_reason = relevancy, reason


def _lexical(answer: str, chunks: Sequence[CachedChunk | None], verdicts: Sequence[_Verdict],
             refusals: Sequence[str]) -> float | None:
    """The fast path's lexical groundedness of the answer against its chunks with text (scorers/lexical.py), without
    its refusals (a partial refusal's "I can't speak to Klarna" is no unsupported claim), the numbers of claims the
    judge found in the context (a rule after missing_quantity decided them) read as words."""
    for refusal in refusals:
        answer = answer.replace(refusal, " ", 1)
    checked = [v.claim.claim for v in verdicts if v.counts and v.evidence.rule in _NUMBERS_CHECKED]
    return groundedness(answer, [c.lexical for c in chunks if c is not None], checked=checked)
