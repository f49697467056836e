"""Fallback detection: did the service decline to answer?

Signals, in order of trust (the first that decides wins):
1. `explicit`: the service's own `fallback` flag, true or false;
2. `empty_retrieval`: the service reported `chunks: []` (configurable);
3. phrase rules: named regular expressions on the answer; the first rule (in
   configured order) that matches names the fallback, unless the answer goes on to
   claim something: "I couldn't find any information on exchanges, but returns are
   free for 90 days" is an answer whose claim must be judged, not a fallback. The
   clauses a rule matched refuse; the rest (scorers/refusal.py) must be refusals too,
   questions, referrals or conversation.

Phrase rules run on RE2: all rules are matched in one linear-time pass
(about 1 us for six rules on a short answer, against 20 us for Python's re),
and a careless user pattern cannot backtrack catastrophically on an answer.
The syntax is Python's without lookaround and backreferences.

RE2 releases the GIL for every match, and taking it back waits for whichever
thread holds it (up to the 5 ms switch interval while the Kafka consumer or
the local judge is busy: 1 us alone, 900 us beside a busy thread). So the
pipeline's batches are matched together (`prepare`): one search of all their
answers, joined, finds which answers may match, and only those are matched
rule by rule; a batch of 500 costs a few dozen matches instead of 500.

An answer a rule matched is then read clause by clause (scorers/refusal.py, some 20 us). A service's fallback answers
are mostly a few templates, so the decisions for matched answers are remembered, least recently used out first
(MEMO_ENTRIES answers of at most MEMO_ANSWER_BYTES, MEMO_BYTES in all), evictions counted.
"""

from __future__ import annotations

import bisect
import re
from collections import OrderedDict
from collections.abc import Sequence

import re2
from prometheus_client import CollectorRegistry

from ragpulse._native import fallback_fields
from ragpulse.collector.events import Envelope, TraceEvent
from ragpulse.collector.telemetry.fast_metrics import CounterFamily
from ragpulse.config import re2_options
from ragpulse.scorers.refusal import read, substantive
from ragpulse.scorers.refusal_zh import in_both_scripts

EXPLICIT = "explicit"
EMPTY_RETRIEVAL = "empty_retrieval"
# Patterns tied to the start or end of the whole text (\A, \z, multi-line mode turned off) would
# miss an answer inside the joined batch: with one of them, answers are matched one by one.
_WHOLE_TEXT_ANCHOR = re.compile(r"\\[Az]|\(\?[a-zA-Z]*-[a-zA-Z]*m")
_UNDECIDED = object()
MEMO_ENTRIES = 1_024
MEMO_ANSWER_BYTES = 2_048
MEMO_BYTES = 512 * 1024


class FallbackMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.memo_evicted = CounterFamily(
            "ragpulse_fallback_memo_evicted_total", "Decisions for answers a fallback phrase matched, dropped from the "
            "memo of recent ones for its caps: such an answer is read again when it recurs.", [], registry)


class FallbackDetector:
    def __init__(self, rules: Sequence[tuple[str, str]], *, empty_retrieval: bool,
                 metrics: FallbackMetrics | None = None) -> None:
        """With `metrics`, the decisions for matched answers are remembered and their evictions counted there. A rule's
        Chinese phrases match in Traditional characters too."""
        rules = [(name, in_both_scripts(pattern)) for name, pattern in rules]
        self._names = [name for name, _ in rules]
        self._rules: re2.Set | None = None
        self._each = [re2.compile(pattern, options=re2_options()) for _, pattern in rules]  # where a matched rule matched
        # Any rule, in multi-line mode so that ^ and $ also match where one joined answer ends and the
        # next begins: it finds a superset of the answers that match, each then checked by the Set.
        self._any: re2._Regexp | None = None
        if rules:
            self._rules = re2.Set.SearchSet(re2_options())
            for _, pattern in rules:
                self._rules.Add(pattern)
            self._rules.Compile()
            if not any(_WHOLE_TEXT_ANCHOR.search(pattern) for _, pattern in rules):
                self._any = re2.compile("(?m)" + "|".join(f"(?:{pattern})" for _, pattern in rules), options=re2_options())
        self._empty_retrieval = empty_retrieval
        self._memo: OrderedDict[bytes, str | None] | None = None
        self._memo_bytes = 0
        if metrics is not None:
            self._memo = OrderedDict()
            self._evicted = metrics.memo_evicted.labels()

    @property
    def rule_names(self) -> list[str]:
        return [EXPLICIT, EMPTY_RETRIEVAL, *self._names]

    def detect(self, event: TraceEvent) -> str | None:
        """The name of the signal that marks `event` a fallback, or None."""
        decided = self._by_fields(event)
        if decided is not _UNDECIDED:
            return decided  # type: ignore[return-value]
        return self._phrase_rule(event.answer.encode())

    def prepare(self, batch: Sequence[Envelope]) -> bool:
        """Decide a whole batch, with one search of the joined answers for the phrase rules; each trace's rule goes on
        its envelope here. Returns whether the batch is decided (then the pipeline calls the stage on none of its
        events)."""
        # By the fields first, in the compiled core (native/src/fallback.rs: `_by_fields` for each trace of the batch).
        pending, joined, starts = fallback_fields(batch, TraceEvent, EXPLICIT, EMPTY_RETRIEVAL,
                                                  empty_retrieval=self._empty_retrieval, rules=self._rules is not None,
                                                  join=self._any is not None)
        if not pending:
            return True
        if joined is None:
            return False  # no joined search: the rest are matched one by one, as they come to the stage
        candidates: set[int] = set()
        for match in self._any.finditer(joined):  # type: ignore[union-attr]
            first = bisect.bisect_right(starts, match.start()) - 1
            last = bisect.bisect_right(starts, max(match.start(), match.end() - 1)) - 1
            candidates.update(range(first, last + 1))  # a match across answers marks every answer it touches
        for index in sorted(candidates):  # the rest were set to None with the search's answers
            envelope = pending[index]
            envelope.fallback_rule = self._phrase_rule(envelope.event.answer.encode())  # type: ignore[union-attr]
        return True

    def _by_fields(self, event: TraceEvent) -> str | None | object:
        if event.answer is None:
            return None  # a failed run gave no answer, so no fallback either
        if event.fallback is not None:
            return EXPLICIT if event.fallback else None
        if self._empty_retrieval and event.chunks is not None and not event.chunks:
            return EMPTY_RETRIEVAL
        return None if self._rules is None else _UNDECIDED

    def _phrase_rule(self, answer: bytes) -> str | None:
        matched = self._rules.Match(answer) if self._rules is not None else None
        if not matched:
            return None
        memo = self._memo
        if memo is None or len(answer) > MEMO_ANSWER_BYTES:
            return self._decide(answer, matched)
        if answer in memo:
            memo.move_to_end(answer)
            return memo[answer]
        decided = memo[answer] = self._decide(answer, matched)
        self._memo_bytes += len(answer)
        while len(memo) > MEMO_ENTRIES or self._memo_bytes > MEMO_BYTES:
            self._memo_bytes -= len(memo.popitem(last=False)[0])
            self._evicted.inc()
        return decided

    def _decide(self, answer: bytes, matched: list[int]) -> str | None:
        # the matches, in characters: the clauses they touch refuse, whatever the recogniser makes of them
        spans = [(len(answer[:m.start()].decode(errors="ignore")), len(answer[:m.end()].decode(errors="ignore")))
                 for index in matched for m in self._each[index].finditer(answer)]
        reading = read(answer.decode(errors="replace"), spans)
        claims = [claim for claim, maybe in zip(reading.claims, reading.maybe, strict=True) if not maybe]
        return None if substantive(claims) else self._names[min(matched)]

    def __call__(self, envelope: Envelope) -> Envelope:
        """One event's rule, on its envelope: outside the pipeline, or for a batch whose prepare failed."""
        event = envelope.event
        if isinstance(event, TraceEvent):
            envelope.fallback_rule = self.detect(event)
        return envelope
