"""Lock-free counter and histogram families for the per-event hot path.

prometheus_client's Counter and Histogram take a lock per update and walk the
buckets in Python: about 3 us per histogram observation, half the fast-path
budget. These families' children are the crate's (native/src/metrics.rs):
plain numbers updated by atomic adds, about ten an event, read by
prometheus_client at scrape time through the Collector interface.

Each child's label text is written once, when the child is made: a family
renders its own exposition lines (collector/telemetry/exposition.py), which was most of
a scrape's cost with prometheus_client's writer (10 us a series). Their
samples, for everything else that reads the registry, are built only when
asked for.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Generic, TypeVar

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

from ragpulse._native import FastCounter, FastHistogram

Child = TypeVar("Child", "FastCounter", "FastHistogram")
_INF = float("inf")


def label_text(names: Sequence[str], values: Sequence[str]) -> str:
    """`a="x",b="y"`, escaped as the text format wants (backslash, newline, double quote)."""
    return ",".join(f'{name}="{_escape(value)}"' for name, value in zip(names, values, strict=True))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def help_text(documentation: str) -> str:
    return documentation.replace("\\", "\\\\").replace("\n", "\\n")


def number(value: float) -> str:
    """A sample value as the text format takes it (repr, or +Inf, -Inf, NaN)."""
    if -_INF < value < _INF:
        return repr(value)
    if value != value:
        return "NaN"
    return "+Inf" if value > 0 else "-Inf"


class RenderedMetric(Metric):
    """A fast family's metric: its text written by the family, its samples built only when read."""

    def __init__(self, family: _Family, typ: str, name: str) -> None:  # type: ignore[type-arg]
        self._family = family
        self._samples: list[Sample] | None = None
        super().__init__(name, family.documentation, typ)

    @property  # type: ignore[override]
    def samples(self) -> list[Sample]:
        if self._samples is None:
            self._samples = self._family.samples()
        return self._samples

    @samples.setter
    def samples(self, value: list[Sample]) -> None:
        self._samples = value or None

    def text(self) -> str:
        return self._family.text()


class _Family(Generic[Child]):
    def __init__(self, name: str, documentation: str, labelnames: Sequence[str], registry: CollectorRegistry) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)
        # Each child with the start of its sample lines, written once.
        self._children: dict[tuple[str, ...], tuple[Child, str]] = {}
        registry.register(self)

    def labels(self, *values: str) -> Child:
        found = self._children.get(values)
        if found is not None:
            return found[0]
        if len(values) != len(self.labelnames):
            raise ValueError(f"{self.name}: expected labels {self.labelnames}, got {values}")
        child = self._new_child()
        self._children[values] = (child, label_text(self.labelnames, values))
        return child

    def _new_child(self) -> Child:
        raise NotImplementedError

    def describe(self) -> Iterator[Metric]:
        yield from self._metrics(include_samples=False)

    def collect(self) -> Iterator[Metric]:
        yield self._rendered()

    def _rendered(self) -> RenderedMetric:
        raise NotImplementedError

    def samples(self) -> list[Sample]:
        return next(iter(self._metrics(include_samples=True))).samples

    def text(self) -> str:
        raise NotImplementedError

    def _header(self, name: str, typ: str) -> str:
        return f"# HELP {name} {help_text(self.documentation)}\n# TYPE {name} {typ}\n"

    def _metrics(self, include_samples: bool) -> Iterator[Metric]:
        raise NotImplementedError


class CounterFamily(_Family[FastCounter]):
    def _new_child(self) -> FastCounter:
        return FastCounter()

    def _rendered(self) -> RenderedMetric:
        return RenderedMetric(self, "counter", self.name.removesuffix("_total"))

    def text(self) -> str:
        name = self.name if self.name.endswith("_total") else self.name + "_total"
        lines = [self._header(name, "counter")]
        for child, labels in list(self._children.values()):
            lines.append(f"{name}{{{labels}}} {number(child.value)}\n" if labels else f"{name} {number(child.value)}\n")
        return "".join(lines)

    def _metrics(self, include_samples: bool) -> Iterator[Metric]:
        family = CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)
        if include_samples:
            for values, (child, _) in list(self._children.items()):
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

    def _rendered(self) -> RenderedMetric:
        return RenderedMetric(self, "histogram", self.name)

    def text(self) -> str:
        name, bound_labels = self.name, self._bound_labels
        lines = [self._header(name, "histogram")]
        for child, labels in list(self._children.values()):
            bucket = f'{name}_bucket{{{labels},le="' if labels else f'{name}_bucket{{le="'
            cumulative = 0
            for bound, count in zip(bound_labels, child.counts, strict=True):
                cumulative += count
                lines.append(f'{bucket}{bound}"}} {cumulative}\n')
            suffix = f"{{{labels}}}" if labels else ""
            lines.append(f"{name}_count{suffix} {cumulative}\n{name}_sum{suffix} {number(child.sum)}\n")
        return "".join(lines)

    def _metrics(self, include_samples: bool) -> Iterator[Metric]:
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        if include_samples:
            for values, (child, _) in list(self._children.items()):
                cumulative, buckets = 0, []
                for bound, count in zip(self._bound_labels, child.counts, strict=True):
                    cumulative += count
                    buckets.append((bound, cumulative))
                family.add_metric(values, buckets, child.sum)
        yield family
