"""GET /api/badcases and GET /api/badcases/{trace_id}: the bad-case store as JSON.

Filters: app, route, stage, since and until (a duration back from now like 2h, an RFC 3339
timestamp or epoch seconds), limit (1-1000, default 20, as the CLI's). `count` is the bad cases returned,
`total` how many the filters match. GET /api/badcases/<id> takes a trace id or a unique prefix of one, as
`ragpulse badcases show` does (409 when the prefix matches several). Newest first. A bad parameter is a
400 that names it. Reads run on a worker thread with their own connection.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from ragpulse.judging import STAGES
from ragpulse.results import badcases
from ragpulse.results.json_response import json_response

MAX_LIMIT = 1000


def routes(sqlite_path: str | None) -> list[web.RouteDef]:
    def no_store() -> web.Response:
        return json_response(404, {"error": "no_store", "message": "the bad-case store is off (results.sqlite_path is null)"})

    async def read(operation: Callable[[sqlite3.Connection], Any]) -> Any:
        assert sqlite_path is not None
        if not Path(sqlite_path).exists():  # nothing judged bad yet
            return None
        return await asyncio.to_thread(_read, sqlite_path, operation)

    async def list_badcases(request: web.Request) -> web.Response:
        if sqlite_path is None:
            return no_store()
        try:
            filters = _filters(request.query)
        except ValueError as exc:
            parameter, message = exc.args
            return json_response(400, {"error": "bad_parameter", "parameter": parameter, "message": message})
        matching = {name: value for name, value in filters.items() if name != "limit"}
        found, total = await read(lambda db: (badcases.query(db, **filters), badcases.count(db, **matching))) or ([], 0)
        return json_response(200, {"badcases": found, "count": len(found), "total": total})

    async def get_badcase(request: web.Request) -> web.Response:
        if sqlite_path is None:
            return no_store()
        trace_id = request.match_info["trace_id"]
        try:
            found = await read(lambda db: badcases.get_by_prefix(db, trace_id))
        except badcases.AmbiguousPrefix as exc:
            return json_response(409, {"error": "ambiguous_prefix", "message": str(exc), "matches": exc.matches})
        if found is None:
            return json_response(404, {"error": "not_found", "message": f"no bad case for trace {trace_id!r}"})
        return json_response(200, found)

    return [web.get("/api/badcases", list_badcases), web.get("/api/badcases/{trace_id}", get_badcase)]


def _read(path: str, read: Callable[[sqlite3.Connection], Any]) -> Any:
    connection = badcases.connect(path)
    try:
        return read(connection)
    finally:
        connection.close()


def _filters(query: Any) -> dict[str, Any]:
    unknown = set(query) - {"app", "route", "stage", "since", "until", "limit"}
    if unknown:
        raise ValueError(sorted(unknown)[0], "unknown parameter; use app, route, stage, since, until, limit")
    filters: dict[str, Any] = {name: query[name] for name in ("app", "route") if name in query}
    if "stage" in query:
        if query["stage"] not in STAGES:
            raise ValueError("stage", f"must be one of {', '.join(STAGES)}")
        filters["stage"] = query["stage"]
    now = time.time()
    for name in ("since", "until"):
        if name in query:
            try:
                filters[name] = badcases.parse_time(query[name], now)
            except ValueError as exc:
                raise ValueError(name, str(exc)) from None
    if "limit" in query:
        try:
            limit = int(query["limit"])
        except ValueError:
            limit = 0
        if not 1 <= limit <= MAX_LIMIT:
            raise ValueError("limit", f"must be an integer from 1 to {MAX_LIMIT}")
        filters["limit"] = limit
    return filters
