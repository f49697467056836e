"""A probe target: the RAG service's own HTTP API, asked one golden question at a time.

The request is the configured body (or the preset's) with every "{query}" in its strings replaced
by the question, and the probe header set to the run's id, so the service (and ragpulse, when the
service reports its traces) can tell probes from users. The answer and the chunks are read from the
response with JSONPath; a field the response does not carry is None ("not reported"), never made up.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import aiohttp
import jsonpath_ng.ext

from ragpulse.config import ProbeResponse, ProbeTarget
from ragpulse.config.base import header_value

PRESET_RESPONSES = {
    "json": ProbeResponse(),
    "openai_chat": ProbeResponse(answer="$.choices[0].message.content", chunks=None),
}
_MAX_RESPONSE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class RetrievedChunk:
    id: str | None
    text: str | None
    score: float | None


@dataclass
class ProbeAnswer:
    answer: str | None = None
    chunks: list[RetrievedChunk] | None = None  # None: the response reports no chunks
    status: int | None = None
    error: str | None = None  # what went wrong, for the question's record: no answer is invented
    seconds: float = 0.0
    release: str | None = None  # when the response says it


class TargetError(Exception):
    """The target cannot be used as configured (a header's variable or file is missing)."""


def _header_value(name: str, value: str) -> str:
    try:
        return header_value(name, value)
    except ValueError as exc:
        raise TargetError(str(exc)) from None


def _fill(template: Any, query: str) -> Any:
    if isinstance(template, str):
        return template.replace("{query}", query)
    if isinstance(template, list):
        return [_fill(item, query) for item in template]
    if isinstance(template, dict):
        return {key: _fill(value, query) for key, value in template.items()}
    return template


class HttpTarget:
    def __init__(self, config: ProbeTarget, probe_header: str) -> None:
        self.name = config.name
        self.timeout_seconds = config.timeout_seconds
        self._config = config
        self._probe_header = probe_header
        self._headers = {name: _header_value(name, value) for name, value in config.headers.items()}
        if config.body is not None:
            self._body = config.body
        elif config.preset == "openai_chat":
            self._body = {"model": config.model, "messages": [{"role": "user", "content": "{query}"}], "temperature": 0}
        else:
            self._body = {"query": "{query}"}
        response = config.response or PRESET_RESPONSES[config.preset]
        self._answer = jsonpath_ng.ext.parse(response.answer)
        self._chunks = jsonpath_ng.ext.parse(response.chunks) if response.chunks else None
        self._chunk_fields = [jsonpath_ng.ext.parse(path) for path in
                              (response.chunk_id, response.chunk_text, response.chunk_score)]
        self._release = jsonpath_ng.ext.parse(response.release) if response.release else None

    async def ask(self, session: aiohttp.ClientSession, query: str, probe_id: str) -> ProbeAnswer:
        started = time.monotonic()
        config = self._config
        # The probe header, and W3C baggage an instrumented app can copy to its spans (probes/marker.py).
        headers = {**self._headers, self._probe_header: probe_id, "baggage": f"ragpulse.probe={probe_id}"}
        body = _fill(self._body, query)
        try:
            if config.method == "GET":
                request = session.get(config.url, params={k: str(v) for k, v in body.items()}, headers=headers)
            else:
                request = session.post(config.url, json=body, headers=headers)
            async with request as response:
                payload = await response.content.read(_MAX_RESPONSE_BYTES + 1)
                status = response.status
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            return ProbeAnswer(error=f"request failed: {type(exc).__name__}: {exc}", seconds=time.monotonic() - started)
        seconds = time.monotonic() - started
        if len(payload) > _MAX_RESPONSE_BYTES:
            return ProbeAnswer(status=status, error="response over 4 MiB", seconds=seconds)
        if status >= 400:
            return ProbeAnswer(status=status, error=f"HTTP {status}", seconds=seconds)
        try:
            data = json.loads(payload)
        except ValueError:
            return ProbeAnswer(status=status, error="the response is not JSON", seconds=seconds)
        return self._read(data, status, seconds)

    def _read(self, data: Any, status: int, seconds: float) -> ProbeAnswer:
        found = [m.value for m in self._answer.find(data)]
        answer = found[0] if found and isinstance(found[0], str) else None
        chunks = None
        if self._chunks is not None:
            matches = self._chunks.find(data)
            if matches:
                chunks = [self._chunk(m.value) for m in matches]
            else:  # an empty list where the chunks are is an empty retrieval; no list at all is "not reported"
                parent = getattr(self._chunks, "left", None)
                if parent is not None and any(isinstance(m.value, list) for m in parent.find(data)):
                    chunks = []
        error = None if answer is not None else "no answer text at the configured path"
        release = next((m.value for m in self._release.find(data)), None) if self._release is not None else None
        return ProbeAnswer(answer=answer, chunks=chunks, status=status, error=error, seconds=seconds,
                           release=str(release)[:256] if isinstance(release, str | int) else None)

    def _chunk(self, value: Any) -> RetrievedChunk:
        id_, text, score = (next((m.value for m in path.find(value)), None) for path in self._chunk_fields)
        return RetrievedChunk(
            id=str(id_) if isinstance(id_, str | int) and not isinstance(id_, bool) else None,
            text=text if isinstance(text, str) else None,
            score=float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None,
        )
