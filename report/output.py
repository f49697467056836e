"""Writing a report: the page to a file, atomically (a reader of the latest report, GET /report, never sees half
of one), and its name from the period's end."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from ragpulse.config import CalibrationConfig
from ragpulse.report import build, page


def write(path: Path, html: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=".report-", suffix=".html")
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(html)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def file_name(kind: str, until: float) -> str:
    """report-daily-2026-12-05T0000Z.html: sorts by time, one a period."""
    return f"report-{kind}-{time.strftime('%Y-%m-%dT%H%MZ', time.gmtime(until))}.html"


def render(request: build.Request, calibration: CalibrationConfig, thresholds: build.Thresholds = build.Thresholds(),
           now: float | None = None) -> tuple[str, dict[str, object]]:
    """The page and the report it shows."""
    found = build.build(request, calibration, thresholds, now)
    return page.render(found), found
