"""The report as a person sees it: `ragpulse report` on a store with a known release change, opened in headless
Chromium. The plots are drawn, the figures on the rendered page are the store's and cover the injected truth,
the release comparison flags the injected change and not the unchanged indicators. TEST_REPORT_SCREENSHOT=PATH
keeps the screenshot's top (docs/report.png is one)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from helpers.browser import render, save
from helpers.report_data import MINUTES, START, TRUTH, fill, probe_runs
from helpers.sidecar import ragpulse_command

from ragpulse.judging import wilson

END = START + MINUTES * 60
READ_PAGE = """JSON.stringify({
  plots: [...document.querySelectorAll('.plot svg')].map(s => { const r = s.getBoundingClientRect();
                                                           return [Math.round(r.width), Math.round(r.height)]; }),
  names: [...document.querySelectorAll('.plot')].map(e => e.dataset.plot),
  figures: Object.fromEntries([...document.querySelectorAll('[data-figure]')].map(e => [e.dataset.figure, e.dataset.value])),
  shown: Object.fromEntries([...document.querySelectorAll('[data-figure]')].map(e => [e.dataset.figure, e.innerText])),
  verdicts: Object.fromEntries([...document.querySelectorAll('[data-verdict]')].map(e => [e.dataset.indicator, e.dataset.verdict])),
  summary: document.querySelector('#summary').innerText,
  cases: [...document.querySelectorAll('.case')].map(e => e.dataset.stage),
})"""
COLUMNS = {"hallucination": ("hallucinated", "judged"), "fallback": ("refusals", "routine"),
           "citation_precision": ("cited_supported", "cited_judged"), "context_utilisation": ("used", "retrieved")}


def test_the_report_in_a_browser_shows_the_stores_figures_and_the_release_change(tmp_path: Path) -> None:
    filled = fill(tmp_path)
    hit_rates = probe_runs(tmp_path / "probes.sqlite3")
    out = tmp_path / "report.html"
    made = subprocess.run([*ragpulse_command(), "report", "--db", str(filled.path), "--from", str(START), "--to", str(END),
                           "--probes-db", str(tmp_path / "probes.sqlite3"), "--out", str(out)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines()[0].startswith("Release r2 against r1: hallucination worse")
    page, png = render(out.as_uri(), READ_PAGE)
    if shot := os.environ.get("TEST_REPORT_SCREENSHOT"):
        save(png, Path(shot), height=2150)  # the summary, the indicators and the first plots
    seen = json.loads(page)
    assert seen["names"] == ["hallucination", "fallback", "citation_precision", "context_utilisation_by_rank", "stages",
                             "release_comparison", "judge_agreement", "probes"]
    assert len(seen["plots"]) == 8 and all(w >= 400 and h >= 150 for w, h in seen["plots"]), seen["plots"]
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(png[20:24], "big") > 3000  # the whole page, tall
    for name, (successes, trials) in COLUMNS.items():
        counts = [filled.counts[r] for r in ("r1", "r2")]
        truth = wilson(sum(c[successes] for c in counts), sum(c[trials] for c in counts))
        assert truth is not None
        assert float(seen["figures"][name]) == truth.estimate
        assert seen["shown"][name] == f"{100 * truth.estimate:.1f}%"
        low, high = map(float, seen["figures"][f"{name}.interval"].split())
        assert (low, high) == (truth.low, truth.high)
        # The hour's truth is the mean of the two halves' (each half has as many routine records).
        assert low <= (TRUTH["r1"][name] + TRUTH["r2"][name]) / 2 <= high, name
    assert seen["verdicts"] == {"hallucination": "worse", "fallback": "unchanged", "citation_precision": "unchanged",
                                "context_utilisation": "unchanged"}
    assert "hallucination worse, 4.4% → 18.5%" in seen["summary"]
    assert seen["cases"] == ["generation", "knowledge_gap"] * 4
    # The probes: the latest run's figures, and the trend plotted (one of the eight plots).
    assert (float(seen["figures"]["probes.hit_rate"]), seen["shown"]["probes.hit_rate"]) == (hit_rates[-1], "50.0%")
    assert seen["shown"]["probes.correctness"] == "4.00/5"
