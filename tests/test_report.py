"""`ragpulse report`: the figures equal the store's, computed with the project's estimators; the release comparison
flags the injected change and not the unchanged indicators; the page is self-contained and deterministic; the
thresholds and the series it reads are the mixin's."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import yaml
from helpers.report_data import MINUTES, PER_MINUTE, START, TRUTH, fill, record
from prometheus_client import CollectorRegistry

from ragpulse.config import CalibrationConfig
from ragpulse.judging import newcombe_difference, two_proportion_z
from ragpulse.mixin.rules import DEFAULTS, RULES_FILE
from ragpulse.report import build, compare, output, prometheus
from ragpulse.report.store import INDICATORS, Share
from ragpulse.results import report_tally
from ragpulse.results.report_tally import ReportTallyStore

pytestmark = pytest.mark.unit
END = START + MINUTES * 60
COLUMNS = {"hallucination": ("hallucinated", "judged"), "fallback": ("refusals", "routine"),
           "citation_precision": ("cited_supported", "cited_judged"), "context_utilisation": ("used", "retrieved")}


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return fill(tmp_path_factory.mktemp("report"))


def test_newcombe_difference_and_the_drift_z() -> None:
    # Newcombe (1998), Statistics in Medicine 17:873, table II, method 10: 56/70 − 48/80 and 9/10 − 3/10.
    first, second = newcombe_difference(56, 70, 48, 80), newcombe_difference(9, 10, 3, 10)
    assert first is not None and second is not None
    assert (round(first.low, 4), round(first.high, 4)) == (0.0524, 0.3339)
    assert (round(second.low, 4), round(second.high, 4)) == (0.1705, 0.8090)
    assert newcombe_difference(1, 0, 3, 10) is None
    # The drift rules' z (mixin/alerts.py): (p1 − p0) / sqrt(p(1 − p)(1/n1 + 1/n0)), p pooled.
    pooled = (201 + 48) / (1089 + 1079)
    assert two_proportion_z(201, 1089, 48, 1079) == (201 / 1089 - 48 / 1079) / (pooled * (1 - pooled) * (1 / 1089 + 1 / 1079)) ** 0.5
    assert two_proportion_z(0, 10, 0, 10) is None and two_proportion_z(1, 0, 1, 1) is None


def test_the_thresholds_are_the_mixins() -> None:
    limits = build.Thresholds()
    assert (limits.hallucination, limits.min_judgments, limits.fallback_band, limits.fallback_min_traces) == \
        (DEFAULTS.hallucination_threshold, DEFAULTS.min_judgments, DEFAULTS.fallback_band, DEFAULTS.fallback_min_traces)
    assert dataclasses.astuple(compare.DriftRule()) == \
        (DEFAULTS.drift_z, DEFAULTS.drift_min_effect, DEFAULTS.drift_min_recent, DEFAULTS.drift_min_baseline)


def test_every_series_the_report_reads_is_recorded_by_the_rules() -> None:
    recorded = {rule["record"] for group in yaml.safe_load(RULES_FILE.read_text())["groups"]
                for rule in group["rules"] if "record" in rule}
    for window in DEFAULTS.rate_windows:
        for names in prometheus.SERIES.values():
            assert {name.format(w=window) for name in names if name} <= recorded, window
        assert prometheus.BY_RANK.format(w=window) in recorded
    for window in (DEFAULTS.fallback_window, DEFAULTS.drift_fast[0]):
        assert prometheus.FALLBACK.format(w=window) in recorded
    assert prometheus.window_for(60) == "1m" and prometheus.window_for(75 * 60) == "6h"


def test_the_figures_are_the_stores_and_cover_the_injected_truth(filled) -> None:  # type: ignore[no-untyped-def]
    found = build.build(build.Request(str(filled.path), START, END), CalibrationConfig(), now=END)
    figures, counts = found["figures"], filled.counts
    for name in INDICATORS:
        successes, trials = COLUMNS[name]
        assert figures.overall[name] == Share(counts["r1"][successes] + counts["r2"][successes],
                                              counts["r1"][trials] + counts["r2"][trials]), name
        for release in ("r1", "r2"):
            share = figures.by_release[release][name]
            assert share == Share(counts[release][successes], counts[release][trials])
            assert share.interval is not None and share.interval.covers(TRUTH[release][name]), (name, release, share)
    assert figures.scopes == 2
    for (app, route), shares in figures.by_scope.items():  # as busy as each other: by name
        assert app == "support-bot"
        for name, (successes, trials) in COLUMNS.items():
            assert shares[name] == Share(filled.by_route[route][successes], filled.by_route[route][trials]), (route, name)
    assert figures.bin_seconds == 120.0 and len(figures.bins) == 30
    assert sum(s.n for s in figures.series["fallback"]) == MINUTES * PER_MINUTE
    assert [j["judge"] for j in figures.judges] == ["llm"] and figures.judges[0]["judged"] == \
        counts["r1"]["judged"] + counts["r2"]["judged"]
    # The bad cases by stage: every hallucination, wrong citation and fallback of the hour, one a trace.
    assert sum(figures.stages["knowledge_gap"]) == counts["r1"]["refusals"] + counts["r2"]["refusals"]
    assert figures.stages["retrieval"] == [0] * 30 and figures.stages["over_refusal"] == [0] * 30
    [judge] = figures.calibration  # every tenth answer audited and reviewed, every eighth review disagreeing
    reviews = filled.reviews["agreed"] + filled.reviews["disagreed"]
    assert (judge["judge"], judge["reviews"], judge["agreement"]) == ("llm", reviews, round(filled.reviews["agreed"] / reviews, 4))
    comparison = found["comparison"]
    assert (comparison["before"], comparison["after"]) == ("r1", "r2")
    verdicts = {row["indicator"]: row["verdict"] for row in comparison["indicators"]}
    assert verdicts == {"hallucination": "worse", "fallback": "unchanged", "citation_precision": "unchanged",
                        "context_utilisation": "unchanged"}
    assert found["release_starts"] == [(START + 30 * 60, "r2")]
    assert found["summary"][0].startswith("Release r2 against r1: hallucination worse, 4.4% → 18.5%")
    # 11.5% over the period is under the 15% line; release r2's 18.5% is above it, whole interval and all
    assert found["summary"][1:] == [
        "In release r2, the hallucination rate 18.5% (95% interval 16.3% to 20.9%) is above the 15% threshold."]
    assert [case["stage"] for case in found["cases"]] == ["generation", "knowledge_gap"] * 4
    assert all(case["groundedness"] == 1 for case in found["cases"][::2])  # the worst generation cases: hallucinations


def test_the_page_states_the_stores_figures_and_fetches_nothing(filled, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    request = build.Request(str(filled.path), START, END)
    html, found = output.render(request, CalibrationConfig(), now=END)
    again, _ = output.render(request, CalibrationConfig(), now=END)
    assert html == again  # deterministic: the same store, the same bytes
    stated = dict(re.findall(r'data-figure="([a-z_]+)" data-value="([^"]+)"', html))
    for name in INDICATORS:
        interval = found["figures"].overall[name].interval
        assert float(stated[name]) == interval.estimate
    # Nothing to fetch: no script, stylesheet, image or frame, no URL but the SVG namespaces' names.
    assert html.count("<svg") == 7 and not re.search(r"<(script|link|img|iframe)\b|url\((?!#)|@import", html)
    assert set(re.findall(r"https?://[^\s\"']+", html)) == {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
    assert re.findall(r'data-indicator="(\w+)" data-verdict="(\w+)"', html) == [
        ("hallucination", "worse"), ("fallback", "unchanged"), ("citation_precision", "unchanged"),
        ("context_utilisation", "unchanged")]
    assert "Satisfaction proxy and its signals: <span class=\"none\">not reported</span>" in html
    assert re.findall(r'data-scope="([^"]+)"', html) == [f"support-bot/{route}" for route, _ in sorted(
        filled.by_route.items(), key=lambda item: (-item[1]["routine"], item[0]))]



def test_the_tally_counts_the_routine_sample_only_and_is_bounded(tmp_path: Path) -> None:
    registry, now = CollectorRegistry(), [START + 7200]
    tally = ReportTallyStore(str(tmp_path / "t.sqlite3"), retention_seconds=3600, max_rows=2, registry=registry,
                             clock=lambda: now[0])
    kinds = {"fallback": False, "hallucination": True, "cited": True, "supported": False, "used": [1]}
    for minute, sample in ((0, "routine"), (90, "routine"), (100, "routine"), (100, "targeted"), (110, "routine")):
        tally(record(f"t{minute}{sample}", START + minute * 60 + 5, "r1", sample=sample, **kinds))  # type: ignore[arg-type]
    tally.flush()
    db = report_tally.connect(str(tmp_path / "t.sqlite3"))
    found = report_tally.rows(db, "report_tally", since=0, until=END * 2)
    assert [(r["bucket"] - START, r["routine"], r["judged"], r["hallucinated"], r["cited_judged"], r["cited_supported"])
            for r in found] == [(0, 1, 1, 1, 1, 0), (5400, 1, 1, 1, 1, 0), (6000, 1, 1, 1, 1, 0), (6600, 1, 1, 1, 1, 0)]
    assert [(r["rank"], r["retrieved"], r["used"]) for r in report_tally.rows(db, "report_rank_tally", since=START,
                                                                             until=START + 60)] == [("1", 1, 0), ("2", 1, 1)]
    tally.purge()  # minute 0 is past the hour's retention; of the three left, the newest two stay
    assert [r["bucket"] - START for r in report_tally.rows(db, "report_tally", since=0, until=END * 2)] == [6000, 6600]
    dropped = "ragpulse_results_dropped_total"
    assert (registry.get_sample_value(dropped, {"reason": "report_retention"}),
            registry.get_sample_value(dropped, {"reason": "report_max_rows"})) == (3.0, 1.0)  # minute 0: a tally row and 2 rank rows


def test_a_prometheus_that_cannot_be_read_leaves_the_stores_report(filled) -> None:  # type: ignore[no-untyped-def]
    request = build.Request(str(filled.path), START, END, prometheus_url="http://127.0.0.1:9")  # nothing listens
    found = build.build(request, CalibrationConfig(), now=END)
    assert found["prometheus"] is None and found["figures"].overall["hallucination"].n == 2168
    assert found["summary"][-1].startswith("Not read from Prometheus, so not reported: Prometheus at http://127.0.0.1:9: ")
