"""What the recording rules say about a period (`ragpulse report --prometheus URL`): each recorded rate with its
interval over time, read with Prometheus' HTTP API (query_range), per app.

The series are the mixin's recorded ones (mixin/rules.py and mixin/alerts.py; tests/test_report.py checks each
name against the rules file), in one of the rate windows: the report picks the shortest window that gives a
plot's step a full window, unless told. A series the rules did not record (a window the rules file lacks, an app
with no traffic) is absent: "not reported", never zero.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

from ragpulse.errors import RagpulseError

# What the page plots from Prometheus: name -> (estimate, lower, upper) series, "{w}" the window.
SERIES = {
    "hallucination_routine": ("app:ragpulse_hallucination_routine:ratio{w}",
                              "app:ragpulse_hallucination_routine:wilson_lower{w}",
                              "app:ragpulse_hallucination_routine:wilson_upper{w}"),
    "hallucination_stratified": ("app:ragpulse_hallucination_stratified:ratio{w}",
                                 "app:ragpulse_hallucination_stratified:lower{w}",
                                 "app:ragpulse_hallucination_stratified:upper{w}"),
    "hallucination_trusted": ("app:ragpulse_hallucination_trusted_stratified:ratio{w}",
                              "app:ragpulse_hallucination_trusted_stratified:lower{w}",
                              "app:ragpulse_hallucination_trusted_stratified:upper{w}"),
    "satisfaction": ("app:ragpulse_satisfaction_proxy:ratio{w}", None, None),
    "citation_precision": ("app:ragpulse_citation_precision:ratio{w}", None, None),
    "context_utilisation": ("app:ragpulse_context_utilisation:ratio{w}", None, None),
}
# The fallback rate is the drift rules' (its windows are the drift and band windows, not the rate windows).
FALLBACK = "app:ragpulse_fallback:ratio{w}"
BY_RANK = "app_rank:ragpulse_context_utilisation:ratio{w}"
# Each satisfaction signal's share of all signals: the recorded counts divided by the recorded total.
SIGNALS, SIGNALS_TOTAL = "app_signal:ragpulse_satisfaction_signals:increase{w}", "app:ragpulse_satisfaction_signals:increase{w}"
WINDOWS = ("1m", "5m", "1h", "6h", "1d")
_SECONDS = {"m": 60, "h": 3600, "d": 86400}
MAX_RESPONSE_BYTES = 8 * 1024 * 1024  # a query_range answer larger than this is refused, not read


class Unread(RagpulseError):
    """Prometheus could not be read: away, an error answer, or an answer too large."""


@dataclass(frozen=True, slots=True)
class Prometheus:
    url: str
    timeout: float = 10.0

    def query_range(self, query: str, start: float, end: float, step: float) -> list[dict[str, Any]]:
        """The result's series: {"metric": labels, "values": [[t, "v"], ...]}."""
        parameters = urllib.parse.urlencode({"query": query, "start": start, "end": end, "step": step})
        return self._get(f"/api/v1/query_range?{parameters}")

    def query(self, query: str, at: float) -> list[dict[str, Any]]:
        return self._get(f"/api/v1/query?{urllib.parse.urlencode({'query': query, 'time': at})}")

    def _get(self, path: str) -> list[dict[str, Any]]:
        try:
            with urllib.request.urlopen(self.url.rstrip("/") + path, timeout=self.timeout) as response:
                body = response.read(MAX_RESPONSE_BYTES + 1)
        except OSError as exc:
            raise Unread(f"Prometheus at {self.url}: {exc}") from exc
        if len(body) > MAX_RESPONSE_BYTES:
            raise Unread(f"Prometheus at {self.url}: an answer over {MAX_RESPONSE_BYTES} bytes")
        try:
            answer = json.loads(body)
        except ValueError:
            raise Unread(f"Prometheus at {self.url}: not an HTTP API answer (a URL other than Prometheus' root?)") from None
        if not isinstance(answer, dict) or answer.get("status") != "success":
            raise Unread(f"Prometheus at {self.url}: {answer.get('error', answer) if isinstance(answer, dict) else answer}")
        return list(answer["data"]["result"])


def seconds(window: str) -> float:
    return float(window[:-1]) * _SECONDS[window[-1]]


def window_for(step: float) -> str:
    """The shortest rate window no shorter than a plot's step (each point a full window), else the longest."""
    return next((w for w in WINDOWS if seconds(w) >= step), WINDOWS[-1])


def _selector(name: str, app: str | None) -> str:
    return name if app is None else f'{name}{{app="{app}"}}'


def _points(result: list[dict[str, Any]], key: str) -> dict[str, list[tuple[float, float]]]:
    return {series["metric"].get(key, ""): [(float(t), float(v)) for t, v in series["values"]]
            for series in result}


def figures(prometheus: Prometheus, *, since: float, until: float, step: float, window: str,
            fallback_window: str, app: str | None) -> dict[str, Any]:
    """Per series name: {app: [(t, estimate, low, high)]} over the period, low and high None where the rule records
    none; the same at the period's end under "at_end" (a range's last step may fall short of it); context
    utilisation by (app, rank) at the end; each satisfaction signal's share of the signals by (app, signal)."""
    found: dict[str, Any] = {"window": window, "fallback_window": fallback_window, "at_end": {}}
    since = until - step * ((until - since) // step)  # steps counted back from the end: the last point is the end
    for name, (estimate, lower, upper) in {**SERIES, "fallback": (FALLBACK, None, None)}.items():
        w = fallback_window if name == "fallback" else window
        queries = [_selector(q.format(w=w), app) if q else None for q in (estimate, lower, upper)]
        parts = [_points(prometheus.query_range(q, since, until, step), "app") if q else {} for q in queries]
        found[name] = _joined(parts)
        ends = [{s["metric"].get("app", ""): [(until, float(s["value"][1]))] for s in prometheus.query(q, until)}
                if q else {} for q in queries]
        found["at_end"][name] = {a: points[0][1:] for a, points in _joined(ends).items()}
    shares = (f"{_selector(SIGNALS.format(w=window), app)} / on (app) group_left () "
              f"({_selector(SIGNALS_TOTAL.format(w=window), app)} > 0)")
    found["signals"] = {(s["metric"].get("app", ""), s["metric"].get("signal", "")): [(float(t), float(v)) for t, v in s["values"]]
                        for s in prometheus.query_range(shares, since, until, step)}
    ranks = prometheus.query(_selector(BY_RANK.format(w=window), app), until)
    found["by_rank"] = {(s["metric"].get("app", ""), s["metric"].get("rank", "")): float(s["value"][1]) for s in ranks}
    return found


def _joined(parts: list[dict[str, list[tuple[float, float]]]]) -> dict[str, list[tuple[float, float, float | None, float | None]]]:
    """Estimate, lower and upper series (by app) joined on their timestamps."""
    lows, highs = ({a: dict(points) for a, points in part.items()} for part in parts[1:])
    return {a: [(t, v, lows.get(a, {}).get(t), highs.get(a, {}).get(t)) for t, v in points] for a, points in parts[0].items()}
