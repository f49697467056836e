"""Lock-free counter and histogram families for the per-event hot path.

prometheus_client's Counter and Histogram take a lock per update and walk the
buckets in Python: about 3 us per histogram observation, half the fast-path
budget. These families keep plain numbers instead, are updated only from the
event-loop thread (the pipeline) and are read by prometheus_client at scrape
time through the Collector interface, on the same thread (the /metrics
handler), so a scrape always sees a consistent state. Exposition, the registry
and every other metric stay prometheus_client's own.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Sequence
from typing import Generic, TypeVar

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.utils import floatToGoString

Child = TypeVar("Child", "FastCounter", "FastHistogram")


class FastCounter:
    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def inc(self, amount: float = 1.0) -> None:
        self.value += amount


class FastHistogram:
    __slots__ = ("_bounds", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self._bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # the last slot is +Inf
        self.sum = 0.0

    def observe(self, value: float) -> None:
        # bisect_left finds the first bound >= value: Prometheus buckets are "le".
        self.counts[bisect_left(self._bounds, value)] += 1
        self.sum += value


class _Family(Generic[Child]):
    def __init__(self, name: str, documentation: str, labelnames: Sequence[str], registry: CollectorRegistry) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        self._children: dict[tuple[str, ...], Child] = {}
        registry.register(self)

    def labels(self, *values: str) -> Child:
        if len(values) != len(self.labelnames):
            raise ValueError(f"{self.name}: expected labels {self.labelnames}, got {values}")
        child = self._children.get(values)
        if child is None:
            child = self._children[values] = self._new_child()
        return child

    def _new_child(self) -> Child:
        raise NotImplementedError

    def describe(self) -> Iterator[Metric]:
        yield from self._metrics(include_samples=False)

    def collect(self) -> Iterator[Metric]:
        yield from self._metrics(include_samples=True)

    def _metrics(self, include_samples: bool) -> Iterator[Metric]:
        raise NotImplementedError


class CounterFamily(_Family[FastCounter]):
    def _new_child(self) -> FastCounter:
        return FastCounter()

    def _metrics(self, include_samples: bool) -> Iterator[Metric]:
        family = CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)
        if include_samples:
            for values, child in list(self._children.items()):
                family.add_metric(values, child.value)
        yield family


class HistogramFamily(_Family[FastHistogram]):
    def __init__(
        self, name: str, documentation: str, labelnames: Sequence[str], registry: CollectorRegistry, buckets: Sequence[float]
    ) -> None:
        self._bounds = tuple(float(b) for b in buckets)
        self._bound_labels = [floatToGoString(b) for b in self._bounds] + ["+Inf"]
        super().__init__(name, documentation, labelnames, registry)

    def _new_child(self) -> FastHistogram:
        return FastHistogram(self._bounds)

    def _metrics(self, include_samples: bool) -> Iterator[Metric]:
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        if include_samples:
            for values, child in list(self._children.items()):
                cumulative, buckets = 0, []
                for bound, count in zip(self._bound_labels, child.counts, strict=True):
                    cumulative += count
                    buckets.append((bound, cumulative))
                family.add_metric(values, buckets, child.sum)
        yield family
