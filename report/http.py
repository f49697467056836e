"""GET /report: the latest scheduled report (report.schedule.directory's latest.html), or one of the kept ones by
`name` (the link the webhook posts). Behind the API's token, as the bad-case API: a report quotes users' questions
and answers (app/server.py guards it with /api/)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from aiohttp import web

from ragpulse.results.json_response import json_response

PATH = "/report"
LATEST = "latest.html"  # the newest scheduled report, whatever its kind
_NAME = re.compile(r"^report-(daily|weekly)-\d{4}-\d{2}-\d{2}T\d{4}Z\.html$")


def routes(directory: str) -> list[web.RouteDef]:
    async def get_report(request: web.Request) -> web.Response:
        unknown = set(request.query) - {"name"}
        if unknown:
            return json_response(400, {"error": "bad_parameter", "parameter": sorted(unknown)[0],
                                       "message": "unknown parameter; use name"})
        name = request.query.get("name", LATEST)
        if name != LATEST and not _NAME.match(name):
            return json_response(400, {"error": "bad_parameter", "parameter": "name",
                                       "message": "a report's file name, e.g. report-daily-2026-12-05T0600Z.html"})
        path = Path(directory) / name
        if not path.is_file():
            return json_response(404, {"error": "not_found", "message": f"no report {name} in {directory} yet "
                                       "(report.schedule writes one daily or weekly)"})
        body = await asyncio.to_thread(path.read_bytes)
        return web.Response(body=body, content_type="text/html", charset="utf-8")

    return [web.get(PATH, get_report)]
