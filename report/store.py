"""What the result store says about a period: each indicator with its interval, overall and over time, per app
and route; the bad cases by stage; the judges and their standing against human reviews.

Every rate is the routine sample's (results/report_tally.py counts it as the sidecar's counters do) with the
Wilson interval of judging's estimators, the one implementation behind the terminal, the API and (in PromQL) the
recording rules. What the store does not hold is None here and "not reported" on the page: the stratified
estimate (the strata's traffic is counted in the sidecar's counters only), satisfaction (signals are kept on
bad cases only).
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ragpulse.config import CalibrationConfig
from ragpulse.judging import STAGES, Interval, report, wilson
from ragpulse.results import report_tally, review_queue

MAX_BINS = 48  # points of a plot over time
MAX_SCOPES = 30  # app and route pairs in the page's table, the busiest first
# Indicator -> (successes, trials) columns of report_tally; context utilisation comes from report_rank_tally.
SHARES = {"hallucination": ("hallucinated", "judged"), "fallback": ("refusals", "routine"),
          "citation_precision": ("cited_supported", "cited_judged")}
INDICATORS = (*SHARES, "context_utilisation")


@dataclass(frozen=True, slots=True)
class Share:
    """successes of n, with the Wilson interval (None when n is 0: no data is not zero)."""

    successes: int
    n: int

    @property
    def interval(self) -> Interval | None:
        return wilson(self.successes, self.n)

    def as_dict(self) -> dict[str, Any]:
        found = self.interval
        return {"successes": self.successes, "n": self.n, "rate": None if found is None else found.estimate,
                "low": None if found is None else found.low, "high": None if found is None else found.high}


@dataclass(slots=True)
class StoreFigures:
    since: float
    until: float
    bin_seconds: float
    bins: list[float]  # each bin's start
    overall: dict[str, Share]  # indicator -> its share over the period
    series: dict[str, list[Share]]  # indicator -> a share a bin
    by_rank: dict[str, Share]  # context utilisation by rank (1..10, 11+)
    stages: dict[str, list[int]]  # stage -> bad cases a bin
    judges: list[dict[str, Any]]  # judge, judge_model, prompt_version, judged: who judged the period
    calibration: list[dict[str, Any]]  # judging.report over the reviews of the period, per judge
    by_release: dict[str, dict[str, Share]] = field(default_factory=dict)  # release -> indicator -> share
    # (app, route) -> indicator -> share, the MAX_SCOPES busiest; scopes: how many the period has in all
    by_scope: dict[tuple[str | None, str | None], dict[str, Share]] = field(default_factory=dict)
    scopes: int = 0
    release_order: list[str] = field(default_factory=list)  # releases by first appearance in the period


def bin_seconds(since: float, until: float) -> float:
    """A whole number of minutes, so that the period has at most MAX_BINS bins."""
    return 60.0 * max(1, math.ceil((until - since) / MAX_BINS / 60.0))


def figures(db: sqlite3.Connection, *, since: float, until: float, app: str | None = None, route: str | None = None,
            calibration: CalibrationConfig) -> StoreFigures:
    width = bin_seconds(since, until)
    bins = [since + i * width for i in range(math.ceil((until - since) / width))]
    tallies = report_tally.rows(db, "report_tally", since=since, until=until, app=app, route=route)
    ranks = report_tally.rows(db, "report_rank_tally", since=since, until=until, app=app, route=route)

    def by_bin(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
        grouped: list[list[dict[str, Any]]] = [[] for _ in bins]
        for row in rows:
            grouped[min(len(bins) - 1, int((row["bucket"] - since) // width))].append(row)
        return grouped

    overall = {name: _share(tallies, *columns) for name, columns in SHARES.items()}
    overall["context_utilisation"] = _share(ranks, "used", "retrieved")
    tallies_by_bin, ranks_by_bin = by_bin(tallies), by_bin(ranks)
    series = {name: [_share(rows, *columns) for rows in tallies_by_bin] for name, columns in SHARES.items()}
    series["context_utilisation"] = [_share(rows, "used", "retrieved") for rows in ranks_by_bin]
    by_rank = {rank: _share([r for r in ranks if r["rank"] == rank], "used", "retrieved")
               for rank in sorted({r["rank"] for r in ranks}, key=_rank_order)}
    releases = list(dict.fromkeys(row["release"] for row in tallies))  # by first appearance
    by_scope = _by_key(tallies, ranks, lambda row: (row["app"], row["route"]))
    busiest = sorted(by_scope, key=lambda scope: (-by_scope[scope]["fallback"].n, str(scope)))[:MAX_SCOPES]
    return StoreFigures(since, until, width, bins, overall, series, by_rank, _stages(db, bins, width, until, app, route),
                        _judges(tallies), _calibration(db, since, calibration),
                        by_release=_by_key(tallies, ranks, lambda row: row["release"]), release_order=releases,
                        by_scope={scope: by_scope[scope] for scope in busiest}, scopes=len(by_scope))


def _by_key(tallies: list[dict[str, Any]], ranks: list[dict[str, Any]],
            key: Callable[[dict[str, Any]], Any]) -> dict[Any, dict[str, Share]]:
    """Every indicator's share for each value of `key` over the rows (a release, an app and route)."""
    grouped: dict[Any, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
    for rows, side in ((tallies, 0), (ranks, 1)):
        for row in rows:
            grouped.setdefault(key(row), ([], []))[side].append(row)
    return {value: {**{name: _share(t, *columns) for name, columns in SHARES.items()},
                    "context_utilisation": _share(r, "used", "retrieved")}
            for value, (t, r) in grouped.items()}


def _share(rows: list[dict[str, Any]], successes: str, trials: str) -> Share:
    return Share(sum(r[successes] for r in rows), sum(r[trials] for r in rows))


def _rank_order(rank: str) -> int:
    return int(rank.rstrip("+"))  # "11+" after "10"


def _stages(db: sqlite3.Connection, bins: list[float], width: float, until: float, app: str | None,
            route: str | None) -> dict[str, list[int]]:
    """Bad cases a bin, by stage (the store keeps one a trace: its latest judgment)."""
    found = {stage: [0] * len(bins) for stage in STAGES}
    if not bins:
        return found
    conditions = [("judged_at >= ?", bins[0]), ("judged_at < ?", until), ("app = ?", app), ("route = ?", route)]
    given = [(clause, value) for clause, value in conditions if value is not None]
    query = (f"SELECT stage, CAST((judged_at - ?) / ? AS INTEGER) AS bin, count(*) FROM badcases "
             f"WHERE {' AND '.join(c for c, _ in given)} GROUP BY stage, bin")
    for stage, number, count in db.execute(query, [bins[0], width, *(value for _, value in given)]):
        if stage in found:
            found[stage][min(number, len(bins) - 1)] += count
    return found


def _judges(tallies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    judged: dict[tuple[str, str, str], int] = {}
    for row in tallies:
        key = (row["judge"], row["judge_model"], row["prompt_version"])
        judged[key] = judged.get(key, 0) + row["judged"]
    # A judge that only decided refusals (the rule judge of fallbacks) judged no answer: not named.
    return [{"judge": j, "judge_model": m, "prompt_version": p, "judged": n} for (j, m, p), n in sorted(judged.items())
            if n]


def _calibration(db: sqlite3.Connection, since: float, options: CalibrationConfig) -> list[dict[str, Any]]:
    """The calibration report (`ragpulse calibration`) over the reviews since the period's start."""
    rows = review_queue.reviewed_rows(db, since=since)
    routine = review_queue.routine_counts(db, since=since)
    return report(rows, routine, threshold=options.agreement_threshold, min_per_class=options.min_reviews)
