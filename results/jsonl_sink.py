"""A JSONL sink: one line per judgment record (or per what `select` makes of it), rotated at a size limit.

Writes are appends of one line; when the file passes `max_bytes` it is renamed to `<path>.1`
(replacing the previous one), so disk use stays under twice the limit.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from ragpulse.judging import Record, Select, judgments_only


class JsonlSink:
    def __init__(self, path: str, max_bytes: int, select: Select = judgments_only) -> None:
        self._select = select
        self._path = Path(path)
        self._max_bytes = max_bytes
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._encode = msgspec.json.Encoder().encode

    def __call__(self, record: Record) -> None:
        line = self._select(record)
        if line is None:
            return
        with self._path.open("ab") as out:
            out.write(self._encode(line) + b"\n")
            size = out.tell()
        if size >= self._max_bytes:
            os.replace(self._path, self._path.with_name(self._path.name + ".1"))

    def close(self) -> None:
        pass
