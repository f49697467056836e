"""A floor under the routine sample, per app, so that the drift tests have the judgments they need.

The drift alerts compare the routine hallucination rate of a recent window with a baseline (a two-proportion
z-test). At a base rate of 5%, a quiet app gets too few routine judgments for the test to see a regression
within its window (docs/benchmarks-log.md: the power, by simulation). The floor raises an app's routine share
when its judgeable traffic of the last minute at the base rate would give fewer than `per_minute`
judgments: rate = max(base rate, per_minute / traffic per minute). The routine draw stays a draw by trace
id, at the higher rate (every trace the base rate takes is still taken); what the floor adds is counted.
The judge's budgets still hold: the routine sample is the first to stop when they run short. A base rate of 0
(judge.sample_rate, or an override for an app or route) keeps the routine sample off: the floor raises no 0.

Traffic per minute is counted in buckets of ten seconds over the last minute; the rate is worked out when a
bucket closes (this runs for every judgeable trace, so it costs a clock read and a counter most of the time).
In an app's first ten seconds it is worked out every 64 traces from the time since its first, at least a
second, so a first burst is neither judged whole nor missed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

BUCKET_SECONDS = 10.0
BUCKETS = 6  # a minute
_FIRST_EVERY = 64  # traces between estimates in an app's first bucket


class _App:
    __slots__ = ("first_seen", "bucket", "count", "closed", "rate")

    def __init__(self, now: float, bucket: int) -> None:
        self.first_seen = now
        self.bucket = bucket
        self.count = 0  # traces in the current bucket
        self.closed: deque[tuple[int, int]] = deque()  # (bucket, traces) of the last minute's closed buckets
        self.rate = 1.0  # the floor's rate, until traffic says otherwise


class RoutineFloor:
    def __init__(self, per_minute: int, clock: Callable[[], float], max_apps: int) -> None:
        self._per_minute = per_minute
        self._clock = clock
        self._max_apps = max_apps
        self._apps: dict[str | None, _App] = {}

    def rate(self, app: str | None, base_rate: float) -> float:
        """Counts one judgeable trace of `app` and returns its routine rate."""
        if self._per_minute <= 0 or base_rate <= 0:  # a rate of 0 opts the app (or route) out of the routine sample
            return base_rate
        now = self._clock()
        bucket = int(now // BUCKET_SECONDS)
        held = self._apps.get(app)
        if held is None:
            if len(self._apps) >= self._max_apps:  # bounded: a flood of app names starts the counts over
                self._apps.clear()
            held = self._apps[app] = _App(now, bucket)
        if bucket != held.bucket:
            self._close(held, bucket, now)
        held.count += 1
        if not held.closed and held.count % _FIRST_EVERY == 0:
            held.rate = self._floor(held.count * 60.0 / max(1.0, now - held.first_seen))
        return max(base_rate, held.rate)

    def _close(self, held: _App, bucket: int, now: float) -> None:
        held.closed.append((held.bucket, held.count))
        while held.closed and held.closed[0][0] < bucket - BUCKETS:  # the six buckets before this one
            held.closed.popleft()
        held.bucket, held.count = bucket, 0
        span = min(BUCKETS * BUCKET_SECONDS, max(BUCKET_SECONDS, now - held.first_seen))
        held.rate = self._floor(sum(count for _, count in held.closed) * 60.0 / span)

    def _floor(self, per_minute: float) -> float:
        return min(1.0, self._per_minute / per_minute) if per_minute > 0 else 1.0
