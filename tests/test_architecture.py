"""The house rules: the layer picture of docs/architecture.md is the code's, modules and functions stay small, and
every component creates the series rules divide by when it is built (a new sidecar's first scrape has them)."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from ragpulse.app.service import Service
from ragpulse.config import parse_config
from ragpulse.errors import RejectReason

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

ROOT = Path(__file__).resolve().parent.parent
NOT_PRODUCT = {"tests", "bench", "scripts", "docs", "grafana", "helm", ".venv", "build", ".cache"}
MAX_MODULE_LINES, MAX_FUNCTION_LINES = 500, 80
# Declarative tables, longer than a function should be and clearer whole.
TABLES = {("mixin/alerts.py", "alerts"): "every alert, its expression, thresholds and runbook text"}


def product_modules() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*.py") if p.relative_to(ROOT).parts[0] not in NOT_PRODUCT)


def test_the_docs_layer_picture_is_drawn_from_the_code() -> None:
    spec = importlib.util.spec_from_file_location("architecture", ROOT / "scripts" / "architecture.py")
    assert spec is not None and spec.loader is not None
    architecture = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(architecture)
    import grimp

    expected = architecture.page_block(grimp.build_graph("ragpulse"))
    assert expected in (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"), \
        "run: python scripts/architecture.py --write"


def test_modules_and_functions_stay_small() -> None:
    too_long = []
    for path in product_modules():
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(ROOT).as_posix()
        if text.count("\n") > MAX_MODULE_LINES:
            too_long.append(f"{name}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and (name, node.name) not in TABLES:
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    too_long.append(f"{name}:{node.lineno} {node.name}: {length} lines")
    assert too_long == []


def first_scrape(data: dict[str, object]) -> set[tuple[str, tuple[tuple[str, str], ...]]]:
    registry = CollectorRegistry()
    Service(parse_config({"http": {"port": 0}, "otlp": {"http_port": 0, "grpc_port": 0}, **data}), registry)
    return {(sample.name, tuple(sorted(sample.labels.items())))
            for family in registry.collect() for sample in family.samples}


def series(name: str, **labels: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    return name, tuple(sorted(labels.items()))


def test_the_series_rules_divide_by_exist_from_the_first_scrape() -> None:
    scrape = first_scrape({"judge": {"mode": "local"}})
    expected = {series("ragpulse_events_dropped_total", reason="shutdown_deadline")}
    for source in ("http", "otlp"):
        expected |= {series("ragpulse_events_invalid_total", source=source, reason=r.value) for r in RejectReason}
        expected |= {series("ragpulse_events_received_total", source=source, type=t) for t in ("trace", "feedback")}
        expected.add(series("ragpulse_events_refused_total", source=source, reason="backpressure"))
    expected |= {series("ragpulse_events_duplicate_total", type=t) for t in ("trace", "feedback")}
    expected |= {series("ragpulse_otlp_traces_total", outcome=o) for o in (
        "complete", "ttl_expired", "capacity", "shutdown", "not_rag", "content_not_captured", "mapping_failed")}
    expected |= {series("ragpulse_otlp_spans_dropped_total", reason=r) for r in (
        "late_span", "duplicate", "too_many_spans", "over_bytes")}
    expected |= {series("ragpulse_results_dropped_total", reason=r) for r in (
        "writer_full", "retention", "max_rows", "review_retention", "review_max_rows")}
    priorities = ("negative_feedback", "escalation", "rephrase", "always", "scorer_flag", "over_refusal", "base_rate")
    reasons = ("queue_full", "evicted", "budget_tokens", "budget_cost", "circuit_open", "trace_unknown", "shutdown")
    expected |= {series("ragpulse_judge_judged_total", priority=p) for p in priorities}
    expected |= {series("ragpulse_judge_skipped_total", priority=p, reason=r) for p in priorities for r in reasons}
    assert expected - scrape == set()
    # No LLM judge: none of its series.
    assert not any(name.startswith("ragpulse_judge_requests") for name, _ in scrape)


def test_an_llm_judge_and_a_kafka_source_bring_their_series() -> None:
    scrape = first_scrape({"judge": {"mode": "llm", "base_url": "http://127.0.0.1:9/v1", "model": "m"},
                           "kafka": {"bootstrap_servers": "127.0.0.1:9", "topics": [{"name": "t"}]}})
    expected = {series("ragpulse_judge_requests_total", judge_model="m", outcome="ok"),
                series("ragpulse_judge_http_requests_total", judge_model="m"),
                series("ragpulse_judge_cost_total", judge_model="m"),
                *(series("ragpulse_judge_tokens_total", judge_model="m", kind=k) for k in ("prompt", "completion")),
                *(series("ragpulse_events_invalid_total", source="kafka", reason=r.value) for r in RejectReason),
                series("ragpulse_events_refused_total", source="kafka", reason="backpressure")}
    assert expected - scrape == set()
    judge_off = first_scrape({"judge": {"mode": "off"}})
    assert not any(name.startswith("ragpulse_judge_") for name, _ in judge_off)


def test_judging_surface_resolves_every_name() -> None:
    """Every name judging declares public is defined by the module its surface names, and nothing else is served."""
    import ragpulse.judging as judging

    for name in judging.__all__:
        assert getattr(judging, name) is not None, name
    with pytest.raises(AttributeError, match="no attribute 'LexicalScorer'"):
        judging.LexicalScorer  # noqa: B018
