"""The cardinality guard: bounded label values, so a bad producer cannot blow up Prometheus."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any, Generic, TypeVar

from prometheus_client import CollectorRegistry, Counter

OTHER = "other"
UNKNOWN = "unknown"  # the event did not carry the label
T = TypeVar("T")


class LabelGuard:
    """Admits at most `max_values` distinct values per label and `max_label_sets` combinations.

    First come, first served: once a label has `max_values` values, new values
    become "other". The combination cap bounds series even when each label is
    within its own cap (50 values on four labels is still 6 million sets); a
    new combination over it becomes "other" on every label. Both are counted
    per event in ragpulse_label_overflow_total (label="<name>" or "label_set").

    Components that count by these labels hear of each label set when it is first admitted
    (`on_new_label_set`) and make the series the recording rules divide by at zero then, before any of
    them counts: a series born with its first count hides that count from increase().
    """

    def __init__(self, names: Sequence[str], max_values: int, max_label_sets: int, registry: CollectorRegistry) -> None:
        self.overflow = overflow = Counter("ragpulse_label_overflow_total",
                           "Events whose label value was replaced by 'other' by the cardinality guard.", ["label"],
                           registry=registry)
        self.names = tuple(names)
        self._max_values = max_values
        self._max_sets = max_label_sets
        self._values: list[set[str]] = [set() for _ in self.names]
        self._sets: set[tuple[str, ...]] = set()
        self._other_set = tuple(OTHER for _ in self.names)
        self._listeners: list[Callable[[tuple[str, ...]], None]] = []
        self._overflow = {name: overflow.labels(label=name) for name in (*self.names, "label_set")}
        fields = attrgetter(*self.names)
        # attrgetter of one name returns the value, of several a tuple: make it always a tuple.
        self.raw_values = fields if len(self.names) > 1 else lambda event: (fields(event),)

    def on_new_label_set(self, precreate: Callable[[tuple[str, ...]], None]) -> None:
        """Call `precreate` with every label set admitted from now on, when it is first admitted, and with those
        admitted already."""
        self._listeners.append(precreate)
        for label_set in self._sets:
            precreate(label_set)

    def admit_event(self, event: Any) -> tuple[str, ...]:
        """Guarded label values of an event (overflow is counted by the fast-path exporter)."""
        return self.admit(self.raw_values(event))[0]

    def admit(self, raw: Sequence[str | None]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Guarded label values for `raw`, and the names of labels that overflowed."""
        values: list[str] = []
        overflowed: list[str] = []
        for name, seen, value in zip(self.names, self._values, raw, strict=True):
            value = value or UNKNOWN
            if value not in seen:
                if len(seen) >= self._max_values:
                    overflowed.append(name)
                    value = OTHER
                else:
                    seen.add(value)
            values.append(value)
        label_set = tuple(values)
        if label_set not in self._sets:
            if len(self._sets) >= self._max_sets:
                self._new(self._other_set)  # one set past the cap: its series must exist too
                return self._other_set, (*overflowed, "label_set")
            self._new(label_set)
        return label_set, tuple(overflowed)

    def _new(self, label_set: tuple[str, ...]) -> None:
        if label_set not in self._sets:
            self._sets.add(label_set)
            for precreate in self._listeners:
                precreate(label_set)

    def count_overflow(self, overflowed: Sequence[str]) -> None:
        for name in overflowed:
            self._overflow[name].inc()


class SeriesCache(Generic[T]):
    """A component's children per raw label set, made once through the guard (`make` gets the raw values):
    an event's series are a dict lookup. Bounded: raw values are unbounded, the series behind them are not."""

    def __init__(self, guard: LabelGuard, make: Callable[[tuple[str | None, ...]], T], max_entries: int) -> None:
        self._raw_values = guard.raw_values
        self._make = make
        self._max_entries = max_entries
        self._cache: dict[tuple[str | None, ...], T] = {}

    def __call__(self, event: Any) -> T:
        raw = self._raw_values(event)
        found = self._cache.get(raw)
        if found is None:
            if len(self._cache) >= self._max_entries:
                self._cache.clear()
            found = self._cache[raw] = self._make(raw)
        return found
