"""The generated Grafana dashboards, checked on their JSON (no Grafana server can be installed here):
committed as generated, every panel titled, described and with a unit, every query naming only what
ragpulse exports or the rules record, rates over $__rate_interval, counters summed before dividing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers.dashboard_queries import GENERATED, panels, queries
from helpers.metrics import exported_metrics
from helpers.promql import as_increase, bare_counts

from ragpulse.mixin.rules import DEFAULTS, rules

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

ROOT = Path(__file__).resolve().parent.parent
RECORDED = {rule["record"] for group in rules(DEFAULTS)["groups"] for rule in group["rules"] if "record" in rule}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


def test_the_committed_dashboards_are_generated_from_the_source() -> None:
    committed = {path.name: path.read_text(encoding="utf-8") for path in (ROOT / "grafana" / "dashboards").glob("*.json")}
    assert committed == GENERATED, "regenerate: python -m ragpulse.mixin (then commit grafana/dashboards/)"


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_every_panel_has_a_title_a_description_a_unit_and_the_datasource_variable(name: str) -> None:
    found = panels(name)
    assert len(found) >= 10
    for panel in found:
        assert panel["title"] and panel["description"], panel
        assert panel["fieldConfig"]["defaults"]["unit"], panel["title"]
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
        assert panel["targets"], panel["title"]
    variables = [variable["name"] for variable in json.loads(GENERATED[name])["templating"]["list"]]
    assert variables == ["datasource", "app", "route", "model", "release"]


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_every_query_names_only_existing_metrics_and_recorded_series(name: str) -> None:
    metrics = set(exported_metrics())
    for expr in queries(name):
        recorded = set(re.findall(r"\b[a-z_]+:ragpulse_\w+:\w+", expr))
        assert recorded <= RECORDED, (expr, recorded - RECORDED)
        for metric in re.findall(r"(?<![:\w])ragpulse_\w+", expr):
            base = next((metric[: -len(s)] for s in HISTOGRAM_SUFFIXES if metric.endswith(s) and metric[: -len(s)] in metrics),
                        metric)
            assert base in metrics, (expr, metric)


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_rates_use_the_rate_interval_and_counters_are_summed_before_dividing(name: str) -> None:
    for query in queries(name):
        # A ratio counts a series born inside its window whole, as the rules do (mixin/promql.py).
        assert " / " not in query or bare_counts(query) == [], query
        expr = as_increase(query)
        for window in re.findall(r"\b(?:rate|increase)\([^\[]*\[([^\]]+)\]", expr):
            assert window in ("$__rate_interval", "$__range"), expr
        # Every rate() and increase() is aggregated (sum, sum by) before a division or a quantile.
        for match in re.finditer(r"\b(?:rate|increase)\(", expr):
            before = expr[: match.start()].rstrip()
            assert re.search(r"sum(?: by \([^)]*\))? ?\($", before), expr


def test_the_fallback_band_and_the_hallucination_interval_are_drawn() -> None:
    by_title = {panel["title"]: panel for panel in panels("ragpulse-overview.json")}
    band = by_title["Fallback rate"]["fieldConfig"]["defaults"]
    assert [step["value"] for step in band["thresholds"]["steps"]] == [None, 0.05, 0.15]
    assert band["custom"]["thresholdsStyle"] == {"mode": "area"}
    rate = by_title["Hallucination rate, $app"]
    assert rate["repeat"] == "app"
    assert [t["legendFormat"] for t in rate["targets"]] == ["stratified", "lower", "upper", "routine"]
    upper = next(o for o in rate["fieldConfig"]["overrides"] if o["matcher"]["options"] == "upper")
    assert {"id": "custom.fillBelowTo", "value": "lower"} in upper["properties"]
    [annotation] = json.loads(GENERATED["ragpulse-overview.json"])["annotations"]["list"]
    assert annotation["name"] == "Releases" and "release" in annotation["expr"]


# The metric families only an optional component exports (a default sidecar has none of them: checked below),
# and what a panel that queries one must name in its description, so that an empty panel says what fills it.
OPTIONAL_FAMILIES = {
    "ragpulse_kafka_": ("kafka.bootstrap_servers",),
    "ragpulse_judge_requests_total": ("LLM judge", "judge.base_url"),
    "ragpulse_judge_request_duration_seconds": ("LLM judge", "judge.base_url"),
    "ragpulse_judge_tokens_total": ("LLM judge", "judge.base_url"),
    "ragpulse_judge_cost_total": ("LLM judge", "judge.base_url"),
    "ragpulse_calibration_reviews_total": ("kind `review`", "calibration.audit_rate"),
    "ragpulse_probe_": ("probes.schedules",),
}
RECORDED_FROM = {rule["record"]: rule["expr"] for group in rules(DEFAULTS)["groups"] for rule in group["rules"]
                 if "record" in rule}


def families(expr: str) -> set[str]:
    """The exported metrics a query reads, through the recording rules it names."""
    found = set(re.findall(r"(?<![:\w])ragpulse_\w+", expr))
    for recorded in set(re.findall(r"\b[a-z_]+:ragpulse_\w+:\w+", expr)) & RECORDED:
        found |= families(RECORDED_FROM[recorded])
    return found


def test_the_optional_families_are_absent_from_a_default_sidecar() -> None:
    from prometheus_client import CollectorRegistry

    from ragpulse.app.service import Service
    from ragpulse.config import parse_config

    registry = CollectorRegistry()
    Service(parse_config({"http": {"port": 0}, "otlp": {"http_port": 0, "grpc_port": 0}}), registry)
    names = {sample.name for family in registry.collect() for sample in family.samples}
    assert {name for name in names if name.startswith(tuple(OPTIONAL_FAMILIES))} == set()
    assert {"ragpulse_judge_judged_total", "ragpulse_calibration_reviews_unmatched_total"} <= names  # their neighbours are


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_a_panel_only_an_optional_component_fills_says_what_fills_it(name: str) -> None:
    for panel in panels(name):
        read = set().union(*(families(target["expr"]) for target in panel["targets"]))
        for prefix, words in OPTIONAL_FAMILIES.items():
            if any(family.startswith(prefix) for family in read):
                missing = [word for word in words if word not in panel["description"]]
                assert not missing and "Filled " in panel["description"], (panel["title"], prefix, missing)


def test_the_optional_panels_are_the_expected_ones() -> None:
    """A guard on the matching itself: the panels the demo leaves empty for want of a component are found."""
    optional = {panel["title"] for name in GENERATED for panel in panels(name)
                if any(f.startswith(tuple(OPTIONAL_FAMILIES)) for t in panel["targets"] for f in families(t["expr"]))}
    assert optional == {"Judge latency", "Tokens", "Cost per hour", "Judge errors", "Judge agreement with human reviews",
                        "Reviews", "Golden-set retrieval (time range)", "Golden-set answers (time range)",
                        "Last probe run", "Kafka consumer lag", "Kafka dead letters and commits"}

