"""/metrics' own text writer against prometheus_client's: the same lines, parsed the same."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info, Summary, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from ragpulse.collector.telemetry.exposition import TextExposition
from ragpulse.collector.telemetry.fast_metrics import CounterFamily, HistogramFamily


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
