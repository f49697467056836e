"""A JSONL sink of judgment records: one line per judgment, rotated at a size limit.

A record has what a bad-case review needs: trace id, labels, score, verdicts per claim with
reasons, judge model, prompt version and tokens. Writes are appends of one line; when the file
passes `max_bytes` it is renamed to `<path>.1` (replacing the previous one), so disk use stays
under twice the limit.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import msgspec

from ragpulse.collector.events import TraceEvent
from ragpulse.scorers.judge import Judgment


def judgment_record(event: TraceEvent, judgment: Judgment) -> dict[str, Any]:
    return {
        "trace_id": judgment.trace_id,
        "judged_at": time.time(),
        "app": event.app, "route": event.route, "model": event.model, "release": event.release,
        "metric": "groundedness",
        "score": judgment.score,
        "hallucination": judgment.hallucination,
        "supported_share": judgment.supported_share,
        "reason": judgment.reason,
        "claims": [msgspec.to_builtins(c) for c in judgment.claims],
        "error": judgment.error,
        "raw_output": judgment.raw_output,
        "judge_model": judgment.judge_model,
        "prompt_version": judgment.prompt_version,
        "prompt_tokens": judgment.prompt_tokens,
        "completion_tokens": judgment.completion_tokens,
    }


class JsonlSink:
    def __init__(self, path: str, max_bytes: int) -> None:
        self._path = Path(path)
        self._max_bytes = max_bytes
        self._path.parent.mkdir(parents=True, exist_ok=True)

    def __call__(self, event: TraceEvent, judgment: Judgment) -> None:
        line = msgspec.json.encode(judgment_record(event, judgment)) + b"\n"
        with self._path.open("ab") as out:
            out.write(line)
            size = out.tell()
        if size >= self._max_bytes:
            os.replace(self._path, self._path.with_name(self._path.name + ".1"))
