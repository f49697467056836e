"""Fallback detection: did the service decline to answer?

Signals, in order of trust (the first that decides wins):
1. `explicit`: the service's own `fallback` flag, true or false;
2. `empty_retrieval`: the service reported `chunks: []` (configurable);
3. phrase rules: named regular expressions on the answer; the first rule that
   matches names the fallback.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragpulse.collector.events import Envelope, TraceEvent

EXPLICIT = "explicit"
EMPTY_RETRIEVAL = "empty_retrieval"


class FallbackDetector:
    def __init__(self, rules: Sequence[tuple[str, str]], *, empty_retrieval: bool) -> None:
        # Compiled once; rules stay separate so a user's pattern cannot break another's groups.
        self._rules = [(name, re.compile(pattern, re.IGNORECASE)) for name, pattern in rules]
        self._empty_retrieval = empty_retrieval

    @property
    def rule_names(self) -> list[str]:
        return [EXPLICIT, EMPTY_RETRIEVAL, *(name for name, _ in self._rules)]

    def detect(self, event: TraceEvent) -> str | None:
        """The name of the signal that marks `event` a fallback, or None."""
        if event.fallback is not None:
            return EXPLICIT if event.fallback else None
        if self._empty_retrieval and event.chunks is not None and not event.chunks:
            return EMPTY_RETRIEVAL
        answer = event.answer
        for name, pattern in self._rules:
            if pattern.search(answer):
                return name
        return None

    def __call__(self, envelope: Envelope) -> Envelope:
        if isinstance(envelope.event, TraceEvent):
            envelope.fallback_rule = self.detect(envelope.event)
        return envelope
