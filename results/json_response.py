"""What the exporters' read APIs share: JSON responses encoded with msgspec."""

from __future__ import annotations

from typing import Any

import msgspec
from aiohttp import web


def json_response(status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(status=status, body=msgspec.json.encode(payload), content_type="application/json", headers=headers)
