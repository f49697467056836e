"""GET /api/calibration: judge vs human reviews from the review queue, as JSON.

The same report as `ragpulse calibration`: per judge, judge model and prompt version, the
agreement table, kappa, sensitivity, specificity, score agreement, the bias cuts and the corrected
hallucination rate of the routine sample. Parameter `since` (a duration back from now like 30d, an
RFC 3339 timestamp or epoch seconds; default 30d). A bad parameter is a 400 that names it.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from aiohttp import web

from ragpulse.config import CalibrationConfig
from ragpulse.judging import report
from ragpulse.results import badcases, review_queue
from ragpulse.results.json_response import json_response

DEFAULT_SINCE = "30d"


def calibration_report(path: str, options: CalibrationConfig, since: float) -> dict[str, Any]:
    """The report of the review queue at `path` (read on the caller's thread)."""
    with closing(review_queue.connect(path)) as db:
        rows = review_queue.reviewed_rows(db, since=since)
        routine = review_queue.routine_counts(db, since=since)
        waiting = review_queue.count_open(db)
    return {
        "since": since, "waiting_for_review": waiting,
        "agreement_threshold": options.agreement_threshold, "min_reviews": options.min_reviews,
        "judges": report(rows, routine, threshold=options.agreement_threshold, min_per_class=options.min_reviews),
    }


def routes(sqlite_path: str | None, options: CalibrationConfig) -> list[web.RouteDef]:
    async def get_calibration(request: web.Request) -> web.Response:
        if sqlite_path is None:
            return json_response(404, {"error": "no_store", "message": "the review queue is off (results.sqlite_path is null)"})
        unknown = set(request.query) - {"since"}
        if unknown:
            return json_response(400, {"error": "bad_parameter", "parameter": sorted(unknown)[0],
                                       "message": "unknown parameter; use since"})
        try:
            since = badcases.parse_time(request.query.get("since", DEFAULT_SINCE), time.time())
        except ValueError as exc:
            return json_response(400, {"error": "bad_parameter", "parameter": "since", "message": str(exc)})
        if not Path(sqlite_path).exists():
            return json_response(200, {"since": since, "waiting_for_review": 0, "judges": [],
                                       "agreement_threshold": options.agreement_threshold,
                                       "min_reviews": options.min_reviews})
        return json_response(200, await asyncio.to_thread(calibration_report, sqlite_path, options, since))

    return [web.get("/api/calibration", get_calibration)]
