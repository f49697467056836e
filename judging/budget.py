"""What the judge may spend: requests per minute, tokens and cost per hour and per day.

The request limit is exact: the provider sees at most `limit` HTTP requests (retries included) in
any 60-second window; a request that would exceed it waits. Token and cost budgets are reserved
before a call (an upper estimate: the prompt's bytes / 3 plus the completion cap) and settled
with the usage the server reports, so concurrent calls cannot overshoot together. As a budget
runs down, the least urgent traces stop being judged first: a priority class may only spend
while more than its reserve share of every budget is left.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass


MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0


class RequestRateLimiter:
    """At most `limit` requests in any `period` seconds, as the provider counts them.

    A request holds its slot while in flight and for `period` seconds after it finished: the
    provider saw it arrive somewhere between its start and its end, so counting from the end is
    the only way to never exceed the limit in the provider's window (it costs one latency of
    headroom per slot). Waiters are served in arrival order.
    """

    def __init__(self, limit: int | None, period: float = MINUTE, clock: Callable[[], float] = time.monotonic) -> None:
        self._limit = limit
        self._period = period
        self._clock = clock
        self._finished: deque[float] = deque()  # end times within the period, oldest first
        self._in_flight = 0
        self._lock = asyncio.Lock()
        self._released = asyncio.Event()

    def remaining(self) -> float:
        if self._limit is None:
            return float("inf")
        self._expire(self._clock())
        return self._limit - len(self._finished) - self._in_flight

    async def acquire(self) -> None:
        if self._limit is None:
            return
        async with self._lock:
            while True:
                now = self._clock()
                self._expire(now)
                if len(self._finished) + self._in_flight < self._limit:
                    self._in_flight += 1
                    return
                # Wake when a request finishes (its slot then ages) or the oldest finished one expires.
                wait = self._period - (now - self._finished[0]) if self._finished else None
                self._released.clear()
                try:
                    await asyncio.wait_for(self._released.wait(), wait)
                except TimeoutError:
                    pass

    def release(self) -> None:
        """The request is over (answered or failed): its slot expires `period` from now."""
        if self._limit is None:
            return
        self._in_flight -= 1
        self._finished.append(self._clock())
        self._released.set()

    def _expire(self, now: float) -> None:
        while self._finished and now - self._finished[0] >= self._period:
            self._finished.popleft()


@dataclass(slots=True)
class Reservation:
    tokens: int
    cost: float


class SpendWindow:
    """Spend over the last `span` seconds, in minute buckets (bounded: span / 60 of them)."""

    def __init__(self, span: float, clock: Callable[[], float]) -> None:
        self._span = span
        self._clock = clock
        self._buckets: deque[list[float]] = deque()  # [minute, tokens, cost]
        self.tokens = 0.0
        self.cost = 0.0

    def add(self, tokens: float, cost: float) -> None:
        minute = self._clock() // MINUTE
        self._expire(minute)
        if not self._buckets or self._buckets[-1][0] != minute:
            self._buckets.append([minute, 0.0, 0.0])
        self._buckets[-1][1] += tokens
        self._buckets[-1][2] += cost
        self.tokens += tokens
        self.cost += cost

    def refresh(self) -> None:
        self._expire(self._clock() // MINUTE)

    def _expire(self, minute: float) -> None:
        while self._buckets and minute - self._buckets[0][0] >= self._span // MINUTE:
            _, tokens, cost = self._buckets.popleft()
            self.tokens -= tokens
            self.cost -= cost


class SpendBudget:
    """Token and cost limits per hour and per day (sliding, minute resolution); None: no limit."""

    def __init__(
        self,
        *,
        tokens_per_hour: int | None,
        tokens_per_day: int | None,
        cost_per_hour: float | None,
        cost_per_day: float | None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._hour = SpendWindow(HOUR, clock)
        self._day = SpendWindow(DAY, clock)
        # (name, window, kind, limit) for every configured limit
        self._limits = [
            (name, window, kind, limit)
            for name, window, kind, limit in (
                ("tokens_per_hour", self._hour, "tokens", tokens_per_hour),
                ("tokens_per_day", self._day, "tokens", tokens_per_day),
                ("cost_per_hour", self._hour, "cost", cost_per_hour),
                ("cost_per_day", self._day, "cost", cost_per_day),
            )
            if limit is not None
        ]
        self._reserved_tokens = 0
        self._reserved_cost = 0.0

    @property
    def names(self) -> list[str]:
        return [name for name, *_ in self._limits]

    def remaining(self, name: str) -> float:
        for limit_name, window, kind, limit in self._limits:
            if limit_name == name:
                window.refresh()
                reserved = self._reserved_tokens if kind == "tokens" else self._reserved_cost
                return max(0.0, limit - getattr(window, kind) - reserved)
        raise KeyError(name)

    def reserve(self, tokens: int, cost: float, keep_share: float) -> Reservation | str:
        """Reserve an estimate, or say which budget refuses it (`budget_tokens`, `budget_cost`).

        Refused when the estimate would leave less than `keep_share` of a limit: the share
        that more urgent priority classes may still spend.
        """
        for name, _, kind, limit in self._limits:
            needed = tokens if kind == "tokens" else cost
            if self.remaining(name) - needed < keep_share * limit:
                return f"budget_{kind}"
        self._reserved_tokens += tokens
        self._reserved_cost += cost
        return Reservation(tokens, cost)

    def settle(self, reservation: Reservation, tokens: int, cost: float) -> None:
        self._reserved_tokens -= reservation.tokens
        self._reserved_cost -= reservation.cost
        self._hour.add(tokens, cost)
        self._day.add(tokens, cost)
