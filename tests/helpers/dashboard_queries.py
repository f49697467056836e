"""The generated Grafana dashboards, their panels and queries (test_dashboards.py checks them on their JSON), and
every query with its variables filled in, for a real Prometheus (test_alerting_e2e.py runs them)."""

from __future__ import annotations

import json
from typing import Any

from ragpulse.mixin import dashboards
from ragpulse.mixin.rules import DEFAULTS

GENERATED = dashboards.render(DEFAULTS)


def panels(name: str) -> list[dict[str, Any]]:
    return json.loads(GENERATED[name])["panels"]


def queries(name: str) -> list[str]:
    return [target["expr"] for panel in panels(name) for target in panel["targets"]]


def dashboard_queries() -> list[str]:
    """Every dashboard query with its variables filled in."""
    filled = []
    for name in GENERATED:
        for expr in queries(name):
            for label in dashboards.LABELS:
                expr = expr.replace(f"${label}", ".*")
            filled.append(expr.replace("$__rate_interval", "1m").replace("$__range", "5m"))
    return filled
