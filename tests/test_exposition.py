"""/metrics' own text writer against prometheus_client's: the same lines, parsed the same."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info, Summary, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from ragpulse.collector.telemetry.exposition import TextExposition
from ragpulse.collector.telemetry.fast_metrics import CounterFamily, HistogramFamily


pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)


def populated() -> CollectorRegistry:
    registry = CollectorRegistry()
    counters = CounterFamily("ragpulse_test_events_total", 'Events "counted"\nwith a backslash \\', ["app", "route"], registry)
    counters.labels("shop", 'we"ird\\route\n').inc(3)
    counters.labels("shop", "returns").inc(0.5)
    histogram = HistogramFamily("ragpulse_test_latency_seconds", "Latency.", ["app"], registry, [0.1, 1.0, 2.5])
    for value in (0.05, 0.1, 0.7, 3.0, 1e9):
        histogram.labels("shop").observe(value)
    histogram.labels("empty")
    HistogramFamily("ragpulse_test_unlabelled_seconds", "No labels.", [], registry, [1.0]).labels().observe(0.5)
    CounterFamily("ragpulse_test_bare_total", "No labels.", [], registry).labels().inc(2)
    Counter("ragpulse_test_requests", "Requests.", ["code"], registry=registry).labels("200").inc(7)
    Gauge("ragpulse_test_depth", "Depth.", registry=registry).set(float("inf"))
    Gauge("ragpulse_test_ratio", "Ratio.", ["kind"], registry=registry).labels("x").set(float("nan"))
    Histogram("ragpulse_test_scrape_seconds", "Scrape.", registry=registry).observe(0.002)
    Summary("ragpulse_test_size_bytes", "Size.", registry=registry).observe(1234567.0)
    Info("ragpulse_test_build", "Build.", registry=registry).info({"version": "1.0"})
    return registry


def parsed(text: str) -> list[tuple[str, str, str, list[tuple[str, dict[str, str], str]]]]:
    # Values as text compare NaN too; float() makes 12 and 12.0 the same number.
    return [(f.name, f.documentation, f.type, [(s.name, s.labels, repr(float(s.value))) for s in f.samples])
            for f in text_string_to_metric_families(text)]


def test_every_sample_help_and_type_match_prometheus_client() -> None:
    registry = populated()
    ours = TextExposition(registry).render().decode()
    theirs = generate_latest(registry).decode()
    assert parsed(ours) == parsed(theirs)
    # Line for line, once numbers are written alike (12 and 12.0, 1234567.0 and 1.234567e+06).
    assert [line.rsplit(" ", 1)[0] for line in ours.splitlines()] == [line.rsplit(" ", 1)[0] for line in theirs.splitlines()]
    assert 'ragpulse_test_events_total{app="shop",route="we\\"ird\\\\route\\n"} 3.0' in ours
    assert 'ragpulse_test_latency_seconds_bucket{app="shop",le="+Inf"} 5' in ours


def test_prometheus_gets_the_text_format_and_an_openmetrics_only_client_openmetrics() -> None:
    exposition = TextExposition(populated())
    prometheus = ("application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,"
                  "text/plain;version=0.0.4;q=0.3,*/*;q=0.2")
    for accept in (prometheus, "", "*/*", "text/plain"):
        assert exposition.encoder(accept)[1] == "text/plain; version=0.0.4; charset=utf-8"
    encoder, content_type = exposition.encoder("application/openmetrics-text; version=1.0.0")
    assert content_type.startswith("application/openmetrics-text")
    assert encoder(CollectorRegistry()).endswith(b"# EOF\n")


def test_samples_of_a_fast_family_are_still_read_by_the_registry() -> None:
    registry = populated()
    assert registry.get_sample_value("ragpulse_test_events_total", {"app": "shop", "route": "returns"}) == 0.5
    assert registry.get_sample_value("ragpulse_test_latency_seconds_bucket", {"app": "shop", "le": "1.0"}) == 3
    assert registry.get_sample_value("ragpulse_test_latency_seconds_count", {"app": "empty"}) == 0


def test_fast_children_count_as_prometheus_client_does() -> None:
    """The crate's children against prometheus_client's own Histogram and Counter on the same updates: a value
    on a bound counts in that bound's bucket ("le"), ints and floats alike, NaN and infinities included."""
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    bounds = [0.1, 0.5, 1.0, 30.0]
    family = HistogramFamily("h_seconds", "h", ["app"], ours, bounds)
    reference = Histogram("h_seconds", "h", ["app"], registry=theirs, buckets=bounds)
    counter, reference_counter = CounterFamily("c_total", "c", ["app"], ours), Counter("c", "c", ["app"], registry=theirs)
    for value in [0, 0.1, 0.10000000000000002, 0.5, 1, 29.999, 30, 31, 1e300, float("inf"), -5, 3]:
        family.labels("a").observe(value)
        reference.labels("a").observe(value)
        counter.labels("a").inc(value if value >= 0 else 1)
        reference_counter.labels("a").inc(value if value >= 0 else 1)
    assert family.labels("a").counts == [3, 2, 1, 3, 3]  # -5, 0, 0.1 | 0.1000...2, 0.5 | 1 | 3, 29.999, 30 | the rest
    ours_samples = {(s.name, tuple(sorted(s.labels.items())), s.value) for m in ours.collect() for s in m.samples}
    theirs_samples = {(s.name, tuple(sorted(s.labels.items())), s.value) for m in theirs.collect() for s in m.samples
                      if not s.name.endswith("_created")}
    assert ours_samples == theirs_samples
    nan = HistogramFamily("n", "n", [], ours, bounds).labels()
    nan.observe(float("nan"))
    assert nan.counts == [1, 0, 0, 0, 0] and nan.sum != nan.sum  # bisect's bucket for NaN, as before
