"""NDJSON bodies read as views of their lines (collector/decode.py `_views`) against bytes.splitlines(), as the decoder
read them before: the same lines, and on generated bodies the same envelopes, rejections and truncations."""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragpulse.collector import decode
from ragpulse.collector.decode import Decoded, EventDecoder, Rejection, _as_event_error, _views
from ragpulse.config import LimitsConfig

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)


class SplitLines(EventDecoder):
    """The decoder as it read NDJSON before: every line a copy, from bytes.splitlines()."""

    def _decode_lines(self, body: bytes, event_type: decode.EventType | None, received_at: float,
                      out: Decoded) -> None:
        decoder = self._one[event_type]
        for index, line in enumerate(body.splitlines()):
            if not line or line.isspace():
                continue
            try:
                self._accept(index, line, decoder.decode(line), received_at, out)
            except decode._ITEM_ERRORS as exc:  # noqa: SLF001
                out.rejections.append(Rejection(index, _as_event_error(exc)))


@settings(max_examples=500)
@given(st.lists(st.sampled_from([b"\n", b" ", b"\t", b"\x0b", b"\x0c", b"a", b"{}"]), max_size=30).map(b"".join))
def test_views_are_the_lines_splitlines_gives_a_body_without_carriage_returns(body: bytes) -> None:
    assert [bytes(line) for line in _views(body)] == body.splitlines()


_line = st.one_of(
    st.builds(lambda n, answer, ts: json.dumps({"type": "trace", "trace_id": f"t{n}", "query": "q", "answer": answer,
                                                 "timestamp": ts, "chunks": [{"text": "x" * n}]}).encode(),
              st.integers(0, 40), st.none() | st.text(max_size=30), st.sampled_from([1796569917304, 17, "bad"])),
    st.builds(lambda n: json.dumps({"type": "feedback", "kind": "thumbs", "value": "up", "trace_id": f"t{n}",
                                    "timestamp": 1796569917304}).encode(), st.integers(0, 5)),
    st.sampled_from([b"", b" ", b"\t \x0c", b"{", b"[1]", b"null", b' {"type": "trace"}', b"\xff"]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_line, max_size=12), st.sampled_from([b"\n", b"\r\n", b"\r"]), st.booleans(),
       st.sampled_from([None, "trace"]))
def test_ndjson_bodies_decode_as_they_did_with_splitlines(lines: list[bytes], end: bytes, trailing: bool,
                                                          event_type: str | None) -> None:
    body = end.join(lines) + (end if trailing else b"")
    limits = LimitsConfig(max_chunk_chars=20)  # some chunks cut: truncations
    got = EventDecoder(limits, "test").decode_body(body, ndjson=True, event_type=event_type)  # type: ignore[arg-type]
    expected = SplitLines(limits, "test").decode_body(body, ndjson=True, event_type=event_type)  # type: ignore[arg-type]
    for envelope in (*got.envelopes, *expected.envelopes):
        envelope.received_at = 0.0  # each decode's own clock
        if envelope.event.timestamp is not None and envelope.event.timestamp < 1e9:
            envelope.event.timestamp = 0.0  # defaulted to that clock
    assert [msgspec.to_builtins(e) for e in got.envelopes] == [msgspec.to_builtins(e) for e in expected.envelopes]
    assert [(r.index, r.error.reason, str(r.error), r.error.field) for r in got.rejections] == [
        (r.index, r.error.reason, str(r.error), r.error.field) for r in expected.rejections]
    assert got.truncations == expected.truncations
