"""The feedback join's reorder hold (feedback/reorder.py): a session's turns classified in the order of their own
timestamps, whatever order they arrive in within satisfaction.reorder_seconds, in bounded state."""

from __future__ import annotations

import random

import pytest
from helpers.clocks import Clock
from helpers.events import envelope, feedback_join
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Chunk, Envelope, FeedbackEvent, TraceEvent

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

QUESTION = "How many days do I have to return unused items?"
# tests/test_scale_out.py's sessions: by session index mod 4, each second and third question is a repeat, a
# rephrase, a follow-up or a new topic of the one before.
SESSION_QUESTIONS = [
    [QUESTION, QUESTION, "What is the time limit for sending back unused items?"],
    [QUESTION, "What's the time limit to return unused items?", "And what about opened items?"],
    [QUESTION, "What about opened items?", QUESTION],
    [QUESTION, "Do you ship to Canada?", "How long does standard shipping take?"],
]
KINDS = ("first", "repeat", "rephrase", "follow_up", "new_topic")
SIGNALS = ("repeat", "rephrase", "silent_accept", "thumbs_down")
START = 1_764_000_000.0  # epoch seconds, as the decoder leaves an event's timestamp


def turn(session: int, index: int, asked: float) -> Envelope:
    return envelope(TraceEvent(trace_id=f"s{session}-t{index}", query=SESSION_QUESTIONS[session % 4][index],
                               answer="Within 30 days.", session_id=f"session-{session}", app="shop", route="returns",
                               timestamp=asked, chunks=[Chunk(text="Returns within 30 days.")]))


def sessions(count: int) -> list[tuple[float, Envelope]]:
    """`count` sessions of three turns a second apart, sessions starting 0.1 s apart: (asked at, the turn)."""
    return sorted(((START + s * 0.1 + i, turn(s, i, START + s * 0.1 + i)) for s in range(count) for i in range(3)),
                  key=lambda pair: pair[0])


def counted(registry: CollectorRegistry) -> dict[str, float]:
    values = {f"turns_{kind}": registry.get_sample_value("ragpulse_session_turns_total", {"kind": kind}) for kind in KINDS}
    for signal in SIGNALS:
        values[signal] = sum(s.value for m in registry.collect() for s in m.samples
                             if s.name == "ragpulse_satisfaction_signals_total" and s.labels["signal"] == signal)
    return values


def run(arrivals: list[tuple[float, Envelope]], **options: float) -> CollectorRegistry:
    """Feeds the turns at their arrival times (the join's clock), then lets every session settle."""
    registry = CollectorRegistry()
    clock = Clock(0.0)
    join = feedback_join(registry, clock, idle_seconds=60.0, **options)
    for arrived, event in arrivals:
        clock.now = arrived - START
        join(event)
    clock.now += 120
    join.expire()
    return registry


def test_a_sessions_turns_out_of_order_are_counted_as_in_order() -> None:
    """120 sessions, turns a second apart, each turn arriving 0 to 2.5 s after it was asked (two forwarding replicas:
    adjacent turns swap places): with the default hold of 5 s every count is what the turns in order give; without
    the hold (reorder_seconds 0, the join as it was) a repeat's original is taken for its repeat and so on."""
    in_order = sessions(120)
    rnd = random.Random(4)
    shuffled = sorted(((asked + rnd.uniform(0, 2.5), event) for asked, event in in_order), key=lambda pair: pair[0])
    latest: dict[str | None, float] = {}
    overtaken = 0  # turns that arrived after a later turn of their session
    for _, event in shuffled:
        asked = event.event.timestamp
        assert isinstance(asked, float)
        overtaken += asked < latest.get(event.event.session_id, asked)
        latest[event.event.session_id] = max(asked, latest.get(event.event.session_id, asked))
    assert overtaken == 45
    truth = counted(run(in_order))
    assert truth == {"turns_first": 120, "turns_repeat": 30, "turns_rephrase": 30, "turns_follow_up": 60,
                     "turns_new_topic": 120, "repeat": 30, "rephrase": 30, "silent_accept": 300, "thumbs_down": 0}
    held = run(shuffled)
    assert counted(held) == truth
    outcomes = {o: held.get_sample_value("ragpulse_session_reorder_total", {"outcome": o}) for o in ("reordered", "late", "full")}
    assert outcomes == {"reordered": 45, "late": 0, "full": 0}  # each overtaken turn put back in its place
    assert held.get_sample_value("ragpulse_feedback_join_entries", {"table": "reorder"}) == 0
    as_they_came = counted(run(shuffled, reorder_seconds=0.0))
    assert as_they_came != truth
    assert (as_they_came["turns_repeat"], as_they_came["turns_rephrase"], as_they_came["turns_follow_up"]) == (36, 24, 54)


def test_session_feedback_waits_behind_the_held_turns_and_lateness_and_caps_are_counted() -> None:
    registry, clock = CollectorRegistry(), Clock(0.0)
    join = feedback_join(registry, clock, idle_seconds=60.0, reorder_seconds=5.0, reorder_max_entries=3)
    join(envelope(TraceEvent(trace_id="solo", query="q", answer="a", timestamp=START)))  # no session: never held
    assert registry.get_sample_value("ragpulse_feedback_join_entries", {"table": "reorder"}) == 0
    join(turn(1, 1, START + 1))  # the second question arrives first...
    join(turn(1, 0, START))  # ...then the first
    # Feedback by session id is about the last answer so far, the second question's: it waits behind both turns.
    join(envelope(FeedbackEvent(kind="thumbs", value="down", session_id="session-1", timestamp=START - 50)))
    assert registry.get_sample_value("ragpulse_feedback_join_entries", {"table": "reorder"}) == 3
    clock.now = 5.0
    join.expire()
    assert registry.get_sample_value("ragpulse_feedback_join_entries", {"table": "reorder"}) == 0
    join(turn(1, 2, START + 0.5))  # asked before the second question, which was classified: late, classified as it lands
    for session in (2, 3, 4):  # a fourth entry: the oldest goes back at once
        join(turn(session, 0, START + 10))
    outcomes = {o: registry.get_sample_value("ragpulse_session_reorder_total", {"outcome": o}) for o in ("reordered", "late", "full")}
    assert outcomes == {"reordered": 1, "late": 1, "full": 1}
    clock.now = 100.0
    join.expire()
    values = counted(registry)
    assert (values["turns_first"], values["turns_follow_up"], values["thumbs_down"], values["rephrase"]) == (4, 1, 1, 1)
    assert registry.get_sample_value("ragpulse_satisfaction_signals_total",
                                     {"app": "shop", "route": "returns", "model": "unknown", "release": "unknown",
                                      "fallback": "false", "signal": "thumbs_down"}) == 1


def on_partition(event: Envelope, partition: int) -> Envelope:
    event.partition = partition
    return event


def test_held_turns_are_counted_once_when_their_partition_moves() -> None:
    """Partition 0 moves while two sessions' turns wait in the hold, out of order: the replica they leave lets go of
    them uncounted (a turn's kind is counted when its answer settles, with its signals); their new owner replays the
    partition in the order asked and goes on. Together the two count what one replica counts seeing everything."""
    early = [on_partition(turn(s, i, START + i), 0) for s in (1, 2) for i in (1, 0)]  # second questions first
    late = [on_partition(turn(s, 2, START + 2), 0) for s in (1, 2)]
    truth = CollectorRegistry()
    clock = Clock(0.0)
    one = feedback_join(truth, clock, idle_seconds=60.0)
    for event in [*early, *late]:
        one(event)
    clock.now = 200.0
    one.expire()

    first, second, clock = CollectorRegistry(), CollectorRegistry(), Clock(0.0)
    old, new = feedback_join(first, clock, idle_seconds=60.0), feedback_join(second, clock, idle_seconds=60.0)
    for event in early:
        old(event)
    assert first.get_sample_value("ragpulse_feedback_join_entries", {"table": "reorder"}) == 4
    old.drop_partitions(frozenset({0}))
    assert first.get_sample_value("ragpulse_feedback_join_entries", {"table": "reorder"}) == 0
    new.replay([(event, False) for event in early])
    assert second.get_sample_value("ragpulse_feedback_join_entries", {"table": "reorder"}) == 0  # rebuilt in order
    for event in late:
        new(event)
    clock.now = 200.0
    old.expire()
    new.expire()
    together = {key: counted(first)[key] + counted(second)[key] for key in counted(truth)}
    assert not any(counted(first).values())  # the partition's sessions were open: their new owner counts them
    assert together == counted(truth) == {"turns_first": 2, "turns_repeat": 0, "turns_rephrase": 1, "turns_follow_up": 2,
                                          "turns_new_topic": 1, "repeat": 0, "rephrase": 1, "silent_accept": 5,
                                          "thumbs_down": 0}
