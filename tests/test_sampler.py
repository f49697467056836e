"""The sampler's draws: the routine sample is decided by the trace id alone, each class draws from
its own stream, and every replica and run makes the same choice."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers.events import envelope, feedback_join
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Chunk, Envelope, TraceEvent
from ragpulse.collector.events import LexicalScores
from ragpulse.collector.telemetry.labels import LabelGuard
from ragpulse.judging.routine_floor import RoutineFloor
from ragpulse.judging.sampler import (
    JudgeQueue,
    JudgeSampler,
    SamplingPolicy,
)
from ragpulse.collector.sampling import draw, in_sample

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

IDS = [f"trace-{i:06d}" for i in range(100_000)]
LABELS = ("app", "route", "model", "release")


def test_draws_are_deterministic_and_uniform() -> None:
    chosen = [i for i in IDS[:20_000] if in_sample(i, 0.05)]
    assert chosen == [i for i in IDS[:20_000] if in_sample(i, 0.05)]  # the same on every replica and run
    assert 900 <= len(chosen) <= 1100
    assert not any(in_sample(i, 0.0) for i in IDS[:1000]) and all(in_sample(i, 1.0) for i in IDS[:1000])
    deciles = [0] * 10
    for trace_id in IDS:
        deciles[int(draw(trace_id, "routine") * 10)] += 1
    assert all(9_500 <= count <= 10_500 for count in deciles)


def test_class_streams_are_independent_of_the_routine_draw() -> None:
    # Under nesting (one hash for every class) a trace outside a 10% routine sample could never fall in
    # a 5% class sample; independent streams give 5% of them, and 0.5% of all traces in both.
    routine = {i for i in IDS if in_sample(i, 0.10)}
    flagged = {i for i in IDS if in_sample(i, 0.05, "scorer_flag")}
    assert 9_700 <= len(routine) <= 10_300 and 4_800 <= len(flagged) <= 5_200
    both = len(routine & flagged)
    assert 400 <= both <= 600, both
    assert abs(len(flagged - routine) / (len(IDS) - len(routine)) - 0.05) < 0.003


def scored(trace_id: str, *, flagged: bool) -> Envelope:
    event = TraceEvent(trace_id=trace_id, query="q", answer="a", app="shop", route="returns", model="m", release="r",
                       chunks=[Chunk(text="chunk")])
    scores = LexicalScores(groundedness=0.1 if flagged else 0.9, answer_relevancy=0.5, context_relevance=0.5,
                           number_mismatch=False)
    return envelope(event, local_scores=scores)


def test_a_flagged_trace_has_the_same_routine_probability_as_an_unflagged_one() -> None:
    registry = CollectorRegistry()
    queue = JudgeQueue(len(IDS), 1 << 30, registry)
    sampler = JudgeSampler(
        SamplingPolicy(base_rate=0.1, rate_overrides={}, class_rates={"scorer_flag": 0.5, "over_refusal": 0.5, "always": 1.0,
                                                                       "negative_feedback": 1, "escalation": 1, "rephrase": 1},
                       always=[], flag_support_below=0.3, over_refusal_context_at_least=0.5),
        queue, registry, LabelGuard(LABELS, 50, 2000, registry),
        feedback_join(registry, max_traces=10),
        max_label_sets=2000, floor=RoutineFloor(0, lambda: 0.0, 10),
    )
    for index, trace_id in enumerate(IDS):
        sampler(scored(trace_id, flagged=index % 2 == 0))  # every other trace is flagged
    items = queue.drain()
    routine = {"flagged": 0, "none": 0}
    for item in items:
        if item.sample == "routine":
            routine[item.stratum] += 1
    # 50,000 traces in each stratum, 10% routine in both: the binomial sd is 67.
    assert abs(routine["flagged"] - routine["none"]) < 400, routine
    assert all(4_700 <= count <= 5_300 for count in routine.values()), routine
    targeted = [item for item in items if item.sample == "targeted"]
    assert {item.stratum for item in targeted} == {"flagged"}
    assert 0.48 <= len(targeted) / (50_000 - routine["flagged"]) <= 0.52
    assert all(item.reasons == ("scorer_flag", "base_rate") for item in items if item.stratum == "flagged")
    # The same traffic through a second sampler (another replica, a restart) picks the same traces.
    assert sorted(item.event.trace_id for item in items if item.sample == "routine") == sorted(
        i for i in IDS if in_sample(i, 0.1))


def test_the_routine_floor_raises_a_quiet_apps_share_to_the_judgments_a_minute_it_asks_for() -> None:
    """20 a minute: an app at 100 judgeable traces a minute (base rate 5%: 5) is sampled at 20%, one at 1,000 a
    minute keeps its 5% (50 > 20); a new app keeps its base rate until a first estimate (a second, or 64 traces)."""
    now = [0.0]
    floor = RoutineFloor(20, lambda: now[0], max_apps=10)
    rates = {}
    for second in range(120):
        now[0] = float(second)
        for _ in range(16):
            rates["busy"] = floor.rate("busy", 0.05)  # 16 a second: 960 a minute
        if second % 3 == 0:
            rates["quiet"] = floor.rate("quiet", 0.05)  # one every 3 seconds: 20 a minute
    assert rates["busy"] == 0.05
    assert rates["quiet"] == 1.0  # 20 a minute is all of them
    now[0] = 120.5  # a burst of 1,000 in the quiet app's next bucket: its rate estimated again every 64, not 100% throughout
    burst = [floor.rate("quiet", 0.05) for _ in range(1_000)]
    assert burst[:63] == [1.0] * 63 and burst[63] == 20 / ((20 + 64) * 60 / 60.5) and burst[-1] == 0.05
    assert round(sum(burst)) == 132  # judged, in expectation; 1,000 before
    now[0] = 0.0
    fresh = RoutineFloor(20, lambda: now[0], max_apps=10)
    assert fresh.rate("new", 0.05) == 0.05  # its first trace: nothing to estimate from yet
    now[0] = 1.0
    assert fresh.rate("new", 0.05) == 20 / 120  # two traces in its first second: 120 a minute
    now[0] = 100.0  # more than a minute later a burst of 100: its base rate, not the quiet minute's 100% (or 52%)
    assert {fresh.rate("new", 0.05) for _ in range(100)} == {0.05}
    off = RoutineFloor(0, lambda: now[0], max_apps=10)
    assert off.rate("any", 0.05) == 0.05
    assert floor.rate("opted-out", 0.0) == 0.0  # a base rate of 0 keeps the routine sample off


def test_the_routine_floor_holds_a_sample_of_the_asked_size_and_counts_what_it_added() -> None:
    """100 judgeable traces a minute for ten minutes at a 5% base rate and a floor of 20: about 200 routine
    judgments (not 50), those beyond the base rate's counted, every base-rate trace still in."""
    registry = CollectorRegistry()
    queue = JudgeQueue(100_000, 1 << 30, registry)
    now = [0.0]
    sampler = JudgeSampler(
        SamplingPolicy(base_rate=0.05, rate_overrides={}, class_rates={"scorer_flag": 0.0, "over_refusal": 0.0, "always": 1.0,
                                                                        "negative_feedback": 1, "escalation": 1, "rephrase": 1},
                       always=[], flag_support_below=0.3, over_refusal_context_at_least=0.5),
        queue, registry, LabelGuard(LABELS, 50, 2000, registry),
        feedback_join(registry, max_traces=10), max_label_sets=2000, floor=RoutineFloor(20, lambda: now[0], 10),
    )
    ids = IDS[:1_000]
    for index, trace_id in enumerate(ids):
        now[0] = index * 0.6  # 100 a minute
        sampler(scored(trace_id, flagged=False))
    routine = {item.event.trace_id for item in queue.drain() if item.sample == "routine"}
    by_base_rate = {trace_id for trace_id in ids if in_sample(trace_id, 0.05)}
    assert by_base_rate <= routine
    assert 170 <= len(routine) <= 240, len(routine)
    assert registry.get_sample_value("ragpulse_judge_routine_raised_total") == len(routine - by_base_rate)



class Traffic:
    """2,000 judgeable traces of one app, 200 a minute for ten minutes, on a clock of their own."""

    def __init__(self, offset: int) -> None:
        self.offset, self.now = offset, 0.0

    def floor(self, scale: float = 1.0) -> RoutineFloor:
        return RoutineFloor(40, lambda: self.now, 10, scale=scale)

    def judged(self, floors: list[RoutineFloor], owner: Callable[[int, str], int]) -> int:
        """Routine judgments at a base rate of 5% under a floor of 40 a minute (about 400 wanted), each trace on the
        floor `owner` names (by its index and its trace id)."""
        judged = 0
        for index in range(2_000):
            self.now = index * 0.3
            trace_id = IDS[self.offset + index]
            judged += in_sample(trace_id, floors[owner(index, trace_id)].rate("shop", 0.05))
        return judged


def test_replicas_sharing_the_traffic_together_judge_what_one_replica_judges_under_the_floor() -> None:
    """The floor counts the whole app's traffic: two replicas behind a trace-id load balancer (judge.replicas 2), or
    two Kafka consumers owning one and two of three partitions of a topic keyed by session (five turns each), judge
    together what one replica seeing everything judges; each counting only its own traffic, they judged twice that.
    Exact on this stretch of trace ids; over five more the pair stayed within 2% of the single replica, the Kafka
    pair within 6% (a partition's share of the traffic moves with its sessions; its share of the partitions does not)."""
    def balanced(_: int, trace_id: str) -> int:
        return 0 if draw(trace_id, "balancer") < 0.5 else 1

    def keyed(index: int, _: str) -> int:
        return 0 if int(draw(f"session-{index // 5}", "partition") * 3) == 0 else 1

    def alone(*_: object) -> int:
        return 0

    def consumers(traffic: Traffic) -> list[RoutineFloor]:
        owners = [traffic.floor(), traffic.floor()]
        owners[0].set_partition_share(1, 3)
        owners[1].set_partition_share(2, 3)
        return owners

    first = Traffic(0)
    assert first.judged([first.floor()], alone) == 416
    assert first.judged([first.floor(2), first.floor(2)], balanced) == 416
    assert first.judged(consumers(first), keyed) == 416
    assert first.judged([first.floor(), first.floor()], balanced) == 822  # each by its own traffic, as before
    for offset in range(10_000, 60_000, 10_000):
        traffic = Traffic(offset)
        one = traffic.judged([traffic.floor()], alone)
        assert abs(traffic.judged([traffic.floor(2), traffic.floor(2)], balanced) - one) <= 0.02 * one
        assert abs(traffic.judged(consumers(traffic), keyed) - one) <= 0.06 * one
