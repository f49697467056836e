"""A floor under the routine sample, per app, so that the drift tests have the judgments they need.

The drift alerts compare the routine hallucination rate of a recent window with a baseline (a two-proportion
z-test). At a base rate of 5%, a quiet app gets too few routine judgments for the test to see a regression
within its window (docs/BENCHMARKS.md: the power, by simulation). The floor raises an app's routine share
when its judgeable traffic of the last minute at the base rate would give fewer than `per_minute`
judgments: rate = max(base rate, per_minute / traffic per minute). The routine draw stays a draw by trace
id, at the higher rate (every trace the base rate takes is still taken); what the floor adds is counted.
The judge's budgets still hold: the routine sample is the first to stop when they run short. A base rate of 0
(judge.sample_rate, or an override for an app or route) keeps the routine sample off: the floor raises no 0.

Traffic per minute is a count over the last 60 seconds in six buckets of ten (the first minute of an app
counts from its first trace, and at least ten seconds, so a first burst does not read as a flood).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

BUCKET_SECONDS = 10.0
BUCKETS = 6  # a minute


class RoutineFloor:
    def __init__(self, per_minute: int, clock: Callable[[], float], max_apps: int) -> None:
        self._per_minute = per_minute
        self._clock = clock
        self._max_apps = max_apps
        # app -> (first seen, [bucket number, count] of the last minute's buckets, oldest first)
        self._apps: dict[str | None, tuple[float, deque[list[int]]]] = {}

    def rate(self, app: str | None, base_rate: float) -> float:
        """Counts one judgeable trace of `app` and returns its routine rate."""
        if self._per_minute <= 0 or base_rate <= 0:  # a rate of 0 opts the app (or route) out of the routine sample
            return base_rate
        now = self._clock()
        held = self._apps.get(app)
        if held is None:
            if len(self._apps) >= self._max_apps:  # bounded: a flood of app names starts the counts over
                self._apps.clear()
            held = self._apps[app] = (now, deque())
        first_seen, buckets = held
        number = int(now // BUCKET_SECONDS)
        if buckets and buckets[-1][0] == number:
            buckets[-1][1] += 1
        else:
            buckets.append([number, 1])
        while buckets[0][0] <= number - BUCKETS:
            buckets.popleft()
        span = min(BUCKETS * BUCKET_SECONDS, max(BUCKET_SECONDS, now - first_seen))
        per_minute = sum(count for _, count in buckets) * 60.0 / span
        return max(base_rate, min(1.0, self._per_minute / per_minute))
