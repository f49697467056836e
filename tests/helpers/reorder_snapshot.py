"""The reorder hold's snapshot (tests/data/reorder_hold.json): a digest of what it does on 3,000 operation sequences.

The compiled core's hold (native/src/reorder.rs) replaced feedback/reorder.py's Python class and was shown equal to it
on these sequences and on hypothesis's (generated operations on the hold alone, generated traffic through the whole
join: listener calls and every sample of the registry); the Python went, and this snapshot holds what the hold did on
the day parity was shown, so any change shows up in tests/test_native_reorder.py, sequence by sequence. After a
deliberate change, rewrite it and read the sequences the test listed:

    PYTHONPATH=tests python -m helpers.reorder_snapshot --write

A sequence, from a fixed seed: the hold's options (seconds, entry and byte caps small enough to be hit), then turns of
four sessions (timestamps with ties, or none while the session is held), feedback on held sessions, expiries, flushes
of Kafka partitions and late turns, the clock moving between them. Its outputs: after each operation, what went back
through which callback, the hold's entries and bytes, which sessions it holds and its counters.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from ragpulse.config import SatisfactionConfig
from ragpulse.feedback.reorder import reorder_hold
from ragpulse.feedback.tables import JoinMetrics

SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "reorder_hold.json"
SEED = 20261206
SEQUENCES = 3000
SESSIONS = ("s0", "s1", "s2", "s3")
OUTCOMES = ("reordered", "late", "full")
Op = tuple[Any, ...]


def operation(rnd: random.Random) -> Op:
    roll = rnd.random()
    if roll < 0.5:
        timestamp = None if rnd.random() < 0.2 else float(rnd.randrange(9))
        return ("turn", rnd.choice(SESSIONS), timestamp, rnd.randrange(-1, 3), rnd.randrange(300),
                rnd.choice((0.0, 0.0, 0.5, 1.0, 3.0)))
    if roll < 0.65:
        return "feedback", rnd.choice(SESSIONS), rnd.randrange(-1, 3), rnd.randrange(300), rnd.choice((0.0, 0.5))
    if roll < 0.85:
        return "expire", rnd.choice((0.0, 0.5, 1.0, 2.0, 6.0))
    if roll < 0.95:
        return "flush", frozenset(p for p in range(-1, 3) if rnd.random() < 0.4)
    return ("late",)


def sequences() -> list[tuple[tuple[float, int, int], list[Op]]]:
    rnd = random.Random(SEED)
    return [((rnd.choice((0.5, 2.0, 5.0)), rnd.randrange(1, 9), rnd.randrange(300, 3001)),
             [operation(rnd) for _ in range(rnd.randrange(41))]) for _ in range(SEQUENCES)]


def apply(hold: Any, op: Op, now: float, seq: int) -> float:
    """Runs `op` on `hold` at `now`; returns the clock after it."""
    if op[0] == "turn":
        _, session, timestamp, partition, chars, step = op
        if timestamp is None and not hold.holds(session):
            timestamp = 4.0
        hold.turn(session, timestamp, partition, chars, now + step, (session, seq))
        return now + step
    if op[0] == "feedback":
        _, session, partition, chars, step = op
        if hold.holds(session):
            hold.feedback(session, partition, chars, now + step, (session, -seq))
        return now + step
    if op[0] == "expire":
        hold.expire(now + op[1])
        return now + op[1]
    if op[0] == "flush":
        hold.flush(op[1])
    else:
        hold.late()
    return now


def outputs(options: tuple[float, int, int], ops: list[Op], maker: Any = reorder_hold) -> list[Any]:
    seconds, entries, held_bytes = options
    config = SatisfactionConfig(reorder_seconds=seconds, reorder_max_entries=entries, reorder_max_bytes=held_bytes)
    metrics = JoinMetrics(CollectorRegistry())
    back: list[Any] = []
    hold = maker(config, metrics, lambda *args: back.append(["turn", *args]),
                 lambda *args: back.append(["feedback", *args]))
    steps, now = [], 0.0
    for seq, op in enumerate(ops, 1):
        now = apply(hold, op, now, seq)
        steps.append([back[:], hold.entries, hold.bytes, [hold.holds(s) for s in SESSIONS],
                      [metrics.reordered.labels(o).value for o in OUTCOMES]])
        back.clear()
    return steps


def digest(options: tuple[float, int, int], ops: list[Op]) -> str:
    return hashlib.sha256(json.dumps(outputs(options, ops)).encode()).hexdigest()[:16]


def write() -> None:
    digests = [digest(*sequence) for sequence in sequences()]
    lines = ",\n".join(json.dumps(d) for d in digests)
    SNAPSHOT.write_text(f'{{\n"seed": {SEED},\n"sequences": {SEQUENCES},\n"digests": [\n{lines}\n]\n}}\n')


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    write()
