"""The feedback join's snapshot (tests/data/join_traces.json): a digest of what the whole join does on 700 streams.

The compiled core's trace table (native/src/traces.rs: the answers by trace id, their caps in entries and bytes, the
tombstones, what the judge sampler keeps and takes) and its Turn replaced the join's Python ones, shown equal to them
on these streams and on hypothesis's; the Python went, and this snapshot holds what the join did on the day parity was
shown, so a change shows up in tests/test_native_traces.py, stream by stream. After a deliberate change, rewrite it
and read the streams the test listed:

    PYTHONPATH=tests python -m helpers.join_snapshot --write

A stream, from a fixed seed: the join's options (caps small enough to be hit), then traces (ids from a pool of 12, sent
again, with or without a session, timestamp, Kafka partition, fallback), feedback by trace or by session (thumbs,
ratings, copies, abandons), reviews, the judge sampler's calls (keep, passed, take and peek of the turns it was told of,
judged, release_reviews), expiries, partitions dropped and replays, the clock moving between them. Its outputs: after
each operation, every table's entries (every attribute of every turn) and bytes, which ids are tombstoned, the listener
calls in order, what the sampler's calls returned and every sample of the registry.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
from prometheus_client import CollectorRegistry

from helpers.clocks import Clock
from helpers.events import envelope, feedback_join
from ragpulse.collector.events import FeedbackEvent, ReviewScores, TraceEvent
from ragpulse.feedback.kept import unpack
from ragpulse.feedback.tables import Listener

SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "join_traces.json"
SEED = 20261207
STREAMS = 700  # the first 700 of the 2,000 parity was shown on (a prefix: same seed); 2,000 took 47 s in CI
IDS = tuple(f"t{n}" for n in range(12))
SESSIONS = ("s0", "s1", "s2")
QUESTIONS = ("How do I return shoes?", "How can I return my shoes?", "And for boots?", "Do you ship to Canada?")
FIELDS = ("trace_id", "at", "labels", "fallback", "size", "signals", "judgment", "payload", "kept", "evidence",
          "sampled_by", "raised", "open", "kind", "partition")
Op = tuple[Any, ...]
_ENCODE = msgspec.msgpack.Encoder().encode


class Recorder(Listener):
    """Every listener call, in order; on a negative signal it does what the judge sampler does with the turn."""

    def __init__(self) -> None:
        self.calls: list[Any] = []
        self.turns: dict[str, Any] = {}

    def negative(self, priority: str, turn: Any) -> None:
        self.calls.append(["negative", priority, turn.trace_id])
        self.turns[turn.trace_id] = turn
        if not turn.kept:
            turn.raised = (*turn.raised, priority)

    def signal_after_judgment(self, trace_id: str, signal: str) -> None:
        self.calls.append(["after_judgment", trace_id, signal])

    def signal(self, turn: Any, signal: str) -> None:
        self.calls.append(["signal", turn.trace_id, signal, turn.kind])
        self.turns[turn.trace_id] = turn

    def review(self, event: FeedbackEvent) -> bool:
        self.calls.append(["review", event.trace_id])
        return False

    def review_expired(self, reason: str) -> None:
        self.calls.append(["review_expired", reason])

    def reviews_judged(self, trace_id: str, reviews: list[FeedbackEvent]) -> None:
        self.calls.append(["reviews_judged", trace_id, len(reviews)])


def options(rnd: random.Random) -> dict[str, Any]:
    return {"max_traces": rnd.randrange(1, 13), "max_bytes": rnd.randrange(500, 6000),
            "window_seconds": rnd.choice((5.0, 30.0, 900.0)), "pending_window_seconds": rnd.choice((5.0, 60.0)),
            "max_pending": rnd.randrange(1, 5), "max_pending_bytes": rnd.randrange(400, 3000),
            "idle_seconds": rnd.choice((10.0, 60.0, 300.0)), "max_sessions": rnd.randrange(1, 5),
            "max_sessions_bytes": rnd.randrange(400, 4000), "reorder_seconds": rnd.choice((0.0, 2.0)),
            "reorder_max_entries": rnd.randrange(1, 7)}


def trace_op(rnd: random.Random) -> Op:
    return ("trace", rnd.choice(IDS), rnd.choice((*SESSIONS, None)), rnd.choice(QUESTIONS),
            rnd.choice(("returns", "returns", "human_handoff")), rnd.choice((None, *map(float, range(8)))),
            rnd.choice((None, None, 0, 1)), rnd.random() < 0.2, rnd.random() < 0.5)


def feedback_op(rnd: random.Random) -> Op:
    kind, value = rnd.choice((("thumbs", "down"), ("thumbs", "up"), ("rating", 1), ("rating", 5), ("rating", 3),
                              ("copy", None), ("abandon", None), ("regenerate", None)))
    by_trace = rnd.random() < 0.6
    return ("feedback", kind, value, rnd.choice(IDS) if by_trace else None,
            None if by_trace else rnd.choice(SESSIONS), rnd.choice((None, None, 0, 1)), rnd.randrange(40))


def operation(rnd: random.Random) -> Op:
    roll = rnd.random()
    if roll < 0.3:
        return trace_op(rnd)
    if roll < 0.5:
        return feedback_op(rnd)
    if roll < 0.54:
        return "review", rnd.choice(IDS), rnd.choice((None, 0, 1))
    if roll < 0.66:
        return "clock", rnd.choice((0.5, 1.0, 3.0, 6.0, 20.0, 70.0, 400.0))
    if roll < 0.84:
        kind = rnd.choice(("keep", "keep", "passed", "take", "take", "peek", "release"))
        return kind, rnd.choice((*IDS, "", "", "") if kind != "passed" else IDS), rnd.choice(((), ("low",)))
    if roll < 0.9:
        return "judged", rnd.choice(IDS), rnd.choice(("sample", "feedback")), rnd.choice(("ok", "bad"))
    if roll < 0.93:
        return ("expire",)
    if roll < 0.96:
        return "drop", frozenset(p for p in (-1, 0, 1) if rnd.random() < 0.4)
    return "replay", [trace_op(rnd) if rnd.random() < 0.6 else feedback_op(rnd) for _ in range(rnd.randrange(5))]


def streams() -> list[tuple[dict[str, Any], list[Op]]]:
    rnd = random.Random(SEED)
    return [(options(rnd), [operation(rnd) for _ in range(rnd.randrange(61))]) for _ in range(STREAMS)]


def event_of(op: Op, number: int) -> Any:
    """The envelope of a trace or feedback operation."""
    if op[0] == "trace":
        _, trace_id, session, query, route, timestamp, partition, fallback, attributed = op
        event: Any = TraceEvent(trace_id=trace_id, query=query, answer="a", session_id=session, app="shop",
                                route=route, timestamp=timestamp, attributes={"k": "v" * 30} if attributed else {})
        return envelope(event, partition=partition, fallback_rule="r" if fallback else None)
    _, kind, value, trace_id, session, partition, comment = op
    return envelope(FeedbackEvent(kind=kind, value=value, trace_id=trace_id, session_id=session, comment="c" * comment,
                                  feedback_id=str(number)), partition=partition)


def apply(join: Any, recorder: Recorder, clock: Clock, sent: dict[str, Any], op: Op, number: int) -> Any:
    """Runs `op` on `join`; returns what the join's call returned (the sampler's and judge's calls)."""
    kind = op[0]
    if kind in ("trace", "feedback"):
        item = event_of(op, number)
        if kind == "trace":
            sent[op[1]] = sent["?trace"] = item.event
        join(item)  # the envelope back, its identity a per-process digest: not an output
        return None
    if kind == "review":
        join(envelope(FeedbackEvent(kind="review", trace_id=op[1], feedback_id=str(number), scores=ReviewScores()),
                      partition=op[2]))
        return None
    if kind == "clock":
        clock.now += op[1]
        return None
    if kind == "keep":  # "": the last trace sent
        event = sent.get("?trace" if op[1] == "" else op[1])
        turn = None if event is None else join.keep(event, False, op[2])
        if turn is not None:
            sent["?kept"] = turn.trace_id  # what a take or peek of "" is about
        return None if turn is None else turn.trace_id
    if kind == "passed":
        return join.passed(op[1])
    if kind in ("take", "peek"):  # the table's turn, or the one a listener was told of (it may have left the table)
        trace_id = sent.get("?kept", "") if op[1] == "" else op[1]
        turn = join._traces.get(trace_id)  # noqa: SLF001
        turn = recorder.turns.get(trace_id) if turn is None else turn
        got = None if turn is None else getattr(join, kind)(turn)
        return None if got is None else repr(got)
    if kind == "release":
        return join.release_reviews(op[1])
    if kind == "judged":
        return join.judged(op[1], op[2], op[3], "stage")
    if kind == "expire":
        return join.expire()
    if kind == "drop":
        return join.drop_partitions(op[1])
    return join.replay([(event_of(item, number), item[0] == "trace" and item[7]) for item in op[1]])


def turn_state(turn: Any) -> list[Any]:
    """Its kept event as the snapshot's day held it: serialized whole (feedback/kept.py's form shares its texts)."""
    return [_ENCODE(unpack(turn.payload)) if field == "payload" and turn.payload is not None else getattr(turn, field)
            for field in FIELDS]


def state(join: Any, buried: Callable[[str], bool]) -> list[Any]:
    """Every table's entries and bytes, the tombstones of the pool's ids."""
    sessions = [[key, s.last_at, s.question, [turn_state(t) for t in s.turns], s.size, s.partition, s.released]
                for key, s in join._sessions.items()]  # noqa: SLF001
    pending = [[key, arrived, [[repr(e), size, partition, replayed] for e, size, partition, replayed in waiting]]
               for key, (arrived, waiting) in join._pending.items()]  # noqa: SLF001
    traces = [turn_state(join._traces[key]) for key in join._traces]  # noqa: SLF001
    return [traces, join.traces_bytes, sessions, join.sessions_bytes, pending, join.pending_bytes, join.pending_reviews,
            [buried(key) for key in IDS]]


def samples(registry: CollectorRegistry) -> list[Any]:
    """Every sample but the wall-clock times series were created at, and the kept events' shared texts' (a table
    since)."""
    return sorted([s.name, sorted(s.labels.items()), s.value] for m in registry.collect() for s in m.samples
                  if not s.name.endswith("_created") and s.labels.get("table") != "texts")


def outputs(config: dict[str, Any], ops: list[Op], make: Callable[..., Any] = feedback_join,
            buried: Callable[[Any, str], bool] = lambda join, key: join._traces.buried(key)) -> list[Any]:  # noqa: SLF001
    """After each operation: what it returned, the listener calls it made, the state and the registry."""
    clock, registry, recorder = Clock(0.0), CollectorRegistry(), Recorder()
    join = make(registry, clock, **config)
    join.listeners.append(recorder)
    steps: list[Any] = []
    sent: dict[str, Any] = {}  # trace id -> its last event; ?trace: the last trace, ?kept: the last trace id kept
    for number, op in enumerate(ops):
        returned = apply(join, recorder, clock, sent, op, number)
        steps.append([repr(returned), recorder.calls[:], state(join, lambda key: buried(join, key)), samples(registry)])
        recorder.calls.clear()
    return steps


def digest(config: dict[str, Any], ops: list[Op]) -> str:
    return hashlib.sha256(json.dumps(outputs(config, ops), default=repr).encode()).hexdigest()[:16]


def write() -> None:
    digests = [digest(*stream) for stream in streams()]
    lines = ",\n".join(json.dumps(d) for d in digests)
    SNAPSHOT.write_text(f'{{\n"seed": {SEED},\n"streams": {STREAMS},\n"digests": [\n{lines}\n]\n}}\n')


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    write()
