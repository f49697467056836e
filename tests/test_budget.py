"""Judge budgets, the judge queue's order, attribution: units with a controlled clock."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
from helpers.clocks import Clock, run_in_virtual_time
from helpers.events import envelope
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import TraceEvent
from ragpulse.config import Price
from ragpulse.judging.attribution import attribute
from ragpulse.judging.budget import RequestRateLimiter, Reservation, SpendBudget
from ragpulse.judging.llm_judge import BUILTIN_PROMPT, Completion, LlmJudge, builtin_template
from ragpulse.judging.sampler import PRIORITIES, JudgeItem, JudgeQueue, TraceFilter
from ragpulse.judging.verdicts import Judgment


pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)


def test_request_limiter_never_lets_the_provider_see_more_than_the_limit_in_any_window() -> None:
    """A request reaches the provider somewhere between its start and its end: in any window, the
    requests that could have been counted there must not exceed the limit. In virtual time, so the
    waits are the limiter's own to the second, and two minutes take none."""
    spans: list[tuple[float, float]] = []

    async def main() -> float:
        clock = asyncio.get_running_loop().time
        limiter = RequestRateLimiter(3, period=60.0, clock=clock)

        async def request(duration: float) -> None:
            await limiter.acquire()
            started = clock()
            await asyncio.sleep(duration)
            limiter.release()
            spans.append((started, clock()))

        await asyncio.gather(*(request(i % 4) for i in range(10)))
        return limiter.remaining()

    remaining = run_in_virtual_time(main())
    # Three at once; each next one when a finished request's minute is over, in arrival order.
    assert sorted(spans) == [(0, 0), (0, 1), (0, 2), (60, 63), (61, 61), (62, 63), (121, 123), (123, 123),
                             (123, 126), (183, 184)]
    for start, _ in spans:  # requests that may have arrived within (start - period, start]
        overlapping = [s for s, end in spans if s <= start and end > start - 60]
        assert len(overlapping) <= 3
    assert remaining == 1  # at 184: the ones that ended at 126 and 184 are inside the minute


class ScriptedClient:
    """The openai client's chat.completions.create in virtual time: each call takes `latency` seconds and
    the first is answered 429 with Retry-After: 1."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.sent: list[float] = []
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    async def create(self, **options: object) -> SimpleNamespace:
        import httpx
        import openai

        first = not self.sent
        self.sent.append(asyncio.get_running_loop().time())
        await asyncio.sleep(self.latency)
        if first:
            response = httpx.Response(429, headers={"retry-after": "1"},
                                      request=httpx.Request("POST", "http://judge/v1/chat/completions"))
            raise openai.RateLimitError("slow down", response=response, body=None)
        message = SimpleNamespace(content="{}")
        return SimpleNamespace(usage=SimpleNamespace(prompt_tokens=10, completion_tokens=2), choices=[SimpleNamespace(message=message)])


def test_a_judge_retry_takes_a_slot_of_the_request_limit_like_any_request() -> None:
    """Six judgments at 3 requests a minute, the first answered 429 (Retry-After: 1), one retry allowed:
    the retry waits for the window like any request, after those that were waiting before it."""
    client = ScriptedClient(latency=0.5)
    retried: list[str] = []

    async def main() -> list[Completion]:
        limiter = RequestRateLimiter(3, clock=asyncio.get_running_loop().time)
        judge = LlmJudge(client, "judge-model", builtin_template(), BUILTIN_PROMPT, limiter=limiter,  # type: ignore[arg-type]
                         max_retries=1, max_completion_tokens=256, on_retry=retried.append)
        return await asyncio.gather(*(judge.complete(f"prompt {i}", {}) for i in range(6)))

    done = run_in_virtual_time(main())
    # 0: three requests, the first refused at 0.5; at 60.5 (a minute after they ended) the three that
    # waited since 0; the retry, waiting since 1.5, after them, a minute after they ended at 61.0.
    assert client.sent == [0, 0, 0, 60.5, 60.5, 60.5, 121.0]
    assert retried == ["RateLimitError"]
    assert [c.requests for c in done] == [2, 1, 1, 1, 1, 1] and all(c.error is None for c in done)


def test_request_limiter_counts_what_is_left() -> None:
    clock = Clock()
    limiter = RequestRateLimiter(2, clock=clock)
    asyncio.run(limiter.acquire())
    assert limiter.remaining() == 1  # in flight
    limiter.release()
    assert limiter.remaining() == 1  # finished, inside the window
    clock.now = 60.0
    assert limiter.remaining() == 2
    assert RequestRateLimiter(None).remaining() == float("inf")


def test_spend_budget_reserves_settles_and_keeps_a_reserve_for_urgent_classes() -> None:
    clock = Clock(1_000_000.0)
    budget = SpendBudget(tokens_per_hour=1000, tokens_per_day=None, cost_per_hour=None, cost_per_day=1.0, clock=clock)
    assert budget.names == ["tokens_per_hour", "cost_per_day"]
    first = budget.reserve(400, 0.1, keep_share=0.2)
    assert isinstance(first, Reservation)
    assert budget.remaining("tokens_per_hour") == 600  # reserved counts as spent
    assert budget.reserve(500, 0.1, keep_share=0.2) == "budget_tokens"  # would leave 100 < 200
    budget.settle(first, 300, 0.05)  # the call used less than its estimate
    assert budget.remaining("tokens_per_hour") == 700
    assert budget.remaining("cost_per_day") == pytest.approx(0.95)
    second = budget.reserve(500, 0.1, keep_share=0.2)  # leaves exactly 200: allowed
    assert isinstance(second, Reservation)
    assert budget.reserve(150, 0.01, keep_share=0.2) == "budget_tokens"  # routine: into the reserve
    assert isinstance(budget.reserve(150, 0.01, keep_share=0.0), Reservation)  # urgent: may use it
    assert budget.reserve(10, 0.9, keep_share=0.0) == "budget_cost"
    budget.settle(second, 0, 0.0)
    clock.now += 3600  # an hour later the hour's spend has left the window, the day's has not
    assert budget.remaining("tokens_per_hour") == 1000 - 150  # the urgent reservation is still open
    assert budget.remaining("cost_per_day") == pytest.approx(0.95 - 0.01)


def test_price_per_million_tokens() -> None:
    assert Price(0.15, 0.6).cost(1_000_000, 500_000) == pytest.approx(0.45)


def item(name: str, priority: str) -> JudgeItem:
    return JudgeItem(TraceEvent(trace_id=name, query="q", answer="a"), False, priority)


def test_judge_queue_serves_urgent_first_and_evicts_the_least_urgent_newest() -> None:
    registry = CollectorRegistry()
    skipped = "ragpulse_judge_skipped_total"

    async def main() -> list[str]:
        queue = JudgeQueue(3, 1 << 20, registry)
        assert queue.offer(item("b1", "base_rate")) and queue.offer(item("f1", "scorer_flag"))
        assert queue.offer(item("b2", "base_rate"))
        assert queue.offer(item("n1", "negative_feedback"))  # full: evicts b2 (least urgent, newest)
        assert not queue.offer(item("b3", "base_rate"))  # nothing less urgent to evict
        assert queue.offer(item("a1", "always"))  # evicts b1
        return [(await queue.get()).event.trace_id for _ in range(queue.qsize())]

    assert asyncio.run(main()) == ["n1", "a1", "f1"]
    assert registry.get_sample_value(skipped, {"priority": "base_rate", "reason": "evicted"}) == 2
    assert registry.get_sample_value(skipped, {"priority": "base_rate", "reason": "queue_full"}) == 1
    assert PRIORITIES[0] == "negative_feedback" and PRIORITIES[-1] == "base_rate"


@pytest.mark.parametrize(
    ("fallback", "groundedness", "relevancy", "chunks", "error", "stage"),
    [
        (False, 5, 5, [3, 0], None, None),  # grounded and relevant: not a bad case
        (False, 2, 5, [3, 0], None, "generation"),  # hallucination with a relevant chunk
        (False, 1, 5, [1, 0], None, "retrieval"),  # hallucination, nothing relevant retrieved
        (False, 5, 2, [2], None, "generation"),  # faithful but off the question
        (False, 5, 1, [0], None, "retrieval"),
        (False, 3, 3, [0], None, None),  # middling, not bad
        (True, None, None, [3], None, "over_refusal"),
        (True, None, None, [1, 1], None, "knowledge_gap"),
        (True, None, None, [], None, "knowledge_gap"),  # nothing retrieved at all
        (True, None, None, [3], "APITimeoutError", None),  # no verdict: no stage
        (False, None, None, [], "InternalServerError", None),
    ],
)
def test_attribution(fallback: bool, groundedness: int | None, relevancy: int | None, chunks: list[int],
                     error: str | None, stage: str | None) -> None:
    judgment = Judgment("t", "m", "v", groundedness=groundedness, answer_relevancy=relevancy,
                        chunk_relevance=list(chunks), error=error)
    assert attribute(judgment, fallback) == stage


def test_trace_filter_matches_every_given_field() -> None:
    matches = TraceFilter(route="billing", query_pattern="(?i)refund").compile()
    assert matches(TraceEvent(trace_id="a", query="Where is my REFUND?", answer="", route="billing"))
    assert not matches(TraceEvent(trace_id="b", query="Where is my refund?", answer="", route="returns"))
    assert not matches(TraceEvent(trace_id="c", query="Where is my invoice?", answer="", route="billing"))


def test_sampling_policy_rates_by_class_and_app_route_overrides() -> None:
    from ragpulse.collector.events import LexicalScores
    from ragpulse.judging.sampler import SamplingPolicy

    policy = SamplingPolicy(
        base_rate=0.05,
        rate_overrides={("shop", "returns"): 0.5, (None, "billing"): 0.2, ("bank", None): 1.0},
        class_rates={"scorer_flag": 0.3, "over_refusal": 0.4, "always": 1.0},
        always=[TraceFilter(route="vip").compile()],
        flag_support_below=0.3,
        over_refusal_context_at_least=0.5,
    )

    def event(app: str | None, route: str | None) -> TraceEvent:
        return TraceEvent(trace_id="t", query="q", answer="a", app=app, route=route)

    assert policy.base_rate_of(event("shop", "returns")) == 0.5
    assert policy.base_rate_of(event("shop", "billing")) == 0.2  # route-only override
    assert policy.base_rate_of(event("bank", "loans")) == 1.0  # app-only override
    assert policy.base_rate_of(event("shop", "shipping")) == 0.05

    def stratum(route: str, fallback: str | None, **scores: object) -> str:
        scored = envelope(event("shop", route), fallback_rule=fallback, local_scores=LexicalScores(
            **{"groundedness": 0.9, "answer_relevancy": 0.5, "context_relevance": 0.2, "number_mismatch": False, **scores}))
        return policy.stratum(scored)

    assert stratum("returns", None) == "none"
    assert stratum("returns", None, number_mismatch=True) == "flagged"
    assert stratum("returns", None, groundedness=0.1) == "flagged"
    assert stratum("vip", None, groundedness=0.1) == "always"  # the first stratum that applies
    assert stratum("returns", "sorry", context_relevance=0.6) == "over_refusal"
    assert stratum("returns", "sorry", context_relevance=0.4, groundedness=0.0) == "none"  # a refusal is not flagged
