"""NDJSON bodies as the compiled core reads them (native/src/lines.rs: the lines cut there, a trace needing nothing but
the defaults put in its envelope there) against the Python's loop over bytes.splitlines() with every event through
_accept, as the decoder read them before: on generated bodies the same envelopes, rejections and truncations."""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragpulse.collector import decode
from ragpulse.collector.decode import Decoded, EventDecoder, Rejection, _as_event_error
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


# Traces on both sides of every limit and default of the test's LimitsConfig: timestamps in and out of range and as
# strings, a route or only an intent, chunks with and without rank and date, flat and nested attributes, context,
# a failed run's error, too long texts and too many items.
_text = st.text(alphabet="ab\u00e9\u4e2d ", max_size=30)
_chunk = st.fixed_dictionaries({}, optional={
    "text": st.none() | _text, "id": st.just("c"), "rank": st.integers(0, 3),
    "updated_at": st.sampled_from([1796569917304, 1796569917304.5, 5, 10**15, "2026-01-01T00:00:00+01:00", True]),
})
_trace = st.fixed_dictionaries({"type": st.just("trace"), "trace_id": st.integers(0, 9).map(lambda n: f"t{n}"),
                                "query": _text}, optional={
    "answer": st.none() | _text,
    "timestamp": st.sampled_from([1796569917304, 1796569917304.5, 17, 10**15, "2026-12-07T03:00:00Z", "bad", None]),
    "route": st.sampled_from(["r", None]), "intent": st.just("i"),
    "chunks": st.none() | st.lists(_chunk, max_size=4),
    "attributes": st.dictionaries(st.sampled_from("abcdef"), st.integers(-5, 5) | _text | st.lists(st.integers(), max_size=2)
                                  | st.dictionaries(st.just("k"), st.just([1])), max_size=6),
    "context": st.none() | st.lists(st.fixed_dictionaries({"text": _text}), max_size=2),
    "error": st.just({"type": "Timeout"}),
}).map(lambda trace: json.dumps(trace, ensure_ascii=False).encode())

_line = st.one_of(
    _trace,
    st.builds(lambda n, answer, ts: json.dumps({"type": "trace", "trace_id": f"t{n}", "query": "q", "answer": answer,
                                                 "timestamp": ts, "chunks": [{"text": "x" * n}]}).encode(),
              st.integers(0, 40), st.none() | st.text(max_size=30), st.sampled_from([1796569917304, 17, "bad"])),
    st.builds(lambda n: json.dumps({"type": "feedback", "kind": "thumbs", "value": "up", "trace_id": f"t{n}",
                                    "timestamp": 1796569917304}).encode(), st.integers(0, 5)),
    st.sampled_from([b"", b" ", b"\t \x0c", b"{", b"[1]", b"null", b' {"type": "trace"}', b"\xff"]),
)


@settings(max_examples=1000, deadline=None)
@given(st.lists(_line, max_size=12), st.sampled_from([b"\n", b"\r\n", b"\r"]), st.booleans(),
       st.sampled_from([None, "trace"]), st.sampled_from(["truncate", "reject"]))
def test_ndjson_bodies_decode_as_they_did_with_splitlines(lines: list[bytes], end: bytes, trailing: bool,
                                                          event_type: str | None, on_oversize: str) -> None:
    body = end.join(lines) + (end if trailing else b"")
    # Limits the generated events cross: texts cut or refused, attributes too many or too deep, events too big.
    limits = LimitsConfig(max_event_bytes=500, max_query_chars=20, max_answer_chars=25, max_chunk_chars=20, max_chunks=3,
                          max_attributes=4, max_attribute_depth=2, on_oversize=on_oversize)  # type: ignore[arg-type]
    got = EventDecoder(limits, "test").decode_body(body, ndjson=True, event_type=event_type)  # type: ignore[arg-type]
    expected = SplitLines(limits, "test").decode_body(body, ndjson=True, event_type=event_type)  # type: ignore[arg-type]
    for envelope in (*got.envelopes, *expected.envelopes):
        if envelope.event.timestamp == envelope.received_at:
            envelope.event.timestamp = 0.0  # defaulted to the decode's own clock
        envelope.received_at = 0.0  # each decode's own clock
    assert [msgspec.to_builtins(e) for e in got.envelopes] == [msgspec.to_builtins(e) for e in expected.envelopes]
    assert [(r.index, r.error.reason, str(r.error), r.error.field) for r in got.rejections] == [
        (r.index, r.error.reason, str(r.error), r.error.field) for r in expected.rejections]
    assert got.truncations == expected.truncations
