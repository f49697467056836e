"""A floor under the routine sample, per app, so that the drift tests have the judgments they need.

The drift alerts compare the routine hallucination rate of a recent window with a baseline (a two-proportion
z-test). At a base rate of 5%, a quiet app gets too few routine judgments for the test to see a regression
within its window (docs/benchmarks-log.md: the power, by simulation). The floor raises an app's routine share
when its judgeable traffic of the last minute at the base rate would give fewer than `per_minute`
judgments: rate = max(base rate, per_minute / traffic per minute). The routine draw stays a draw by trace
id, at the higher rate (every trace the base rate takes is still taken); what the floor adds is counted.
The judge's budgets still hold: the routine sample is the first to stop when they run short. A base rate of 0
(judge.sample_rate, or an override for an app or route) keeps the routine sample off: the floor raises no 0.

The traffic is the whole app's, not this replica's: each trace counts `scale` times, the replicas that share the
traffic (judge.replicas behind a load balancer) or the consumed topics' partitions over the ones this replica owns
(a Kafka consumer group, set on every rebalance). So N replicas together judge what one would: each judges
per_minute x its share, whatever traffic it happens to get (docs/scaling-out.md).

Traffic per minute is counted in buckets of ten seconds over the last minute; the rate is worked out when a
bucket closes, and again whenever the current bucket's count has grown by 64 (scaled) since the last estimate, so
that a burst after a quiet while is not sampled at the quiet rate for the rest of its bucket (this runs for every
judgeable trace, so it costs a clock read, an addition and a comparison most of the time). An app new to this
replica, or back after a minute without traffic, is sampled at its base rate until a first estimate: after 64
traces (scaled) or a second, whichever comes first, then every second too until its first bucket closes, from the
time since its first trace (at least a second). So a first burst is not judged whole, on each replica its own.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

BUCKET_SECONDS = 10.0
BUCKETS = 6  # a minute
_EVERY = 64.0  # traces (scaled) between estimates within a bucket...
_FIRST_EVERY_SECONDS = 1.0  # ...or this long, before an app's first bucket closes


class _App:
    __slots__ = ("first_seen", "bucket", "count", "closed", "closed_sum", "rate", "next_count", "next_at")

    def __init__(self, now: float, bucket: int) -> None:
        self.bucket = bucket
        self.closed: deque[tuple[int, float]] = deque()  # (bucket, traces) of the last minute's closed buckets
        self.closed_sum = 0.0
        self.start(now)

    def start(self, now: float) -> None:
        """Counting from scratch: the app is new, or back after a minute without traffic."""
        self.first_seen = now
        self.count = 0.0  # traces in the current bucket, scaled to the whole app's
        self.rate = 0.0  # no raise until a first estimate
        self.next_count, self.next_at = _EVERY, now + _FIRST_EVERY_SECONDS


class RoutineFloor:
    def __init__(self, per_minute: int, clock: Callable[[], float], max_apps: int, *, scale: float = 1.0) -> None:
        self._per_minute = per_minute
        self._clock = clock
        self._max_apps = max_apps
        self._apps: dict[str | None, _App] = {}
        # What one trace seen here stands for of the whole app's traffic: judge.replicas, or total / owned partitions.
        self.scale = scale

    def set_partition_share(self, owned: int, total: int) -> None:
        """A Kafka consumer's share of its topics' partitions, after a rebalance (none owned: nothing to count)."""
        if 0 < owned <= total:
            self.scale = total / owned

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
        held.count += self.scale
        if held.count >= held.next_count or (now >= held.next_at and not held.closed):
            held.next_count, held.next_at = held.count + _EVERY, now + _FIRST_EVERY_SECONDS
            # The last minute's closed buckets and this one so far, over the time they cover (at least a second).
            since = max(held.first_seen, (bucket - BUCKETS) * BUCKET_SECONDS)
            held.rate = self._floor((held.closed_sum + held.count) * 60.0 / max(1.0, now - since))
        return max(base_rate, held.rate)

    def _close(self, held: _App, bucket: int, now: float) -> None:
        held.closed.append((held.bucket, held.count))
        held.closed_sum += held.count
        while held.closed and held.closed[0][0] < bucket - BUCKETS:  # the six buckets before this one
            held.closed_sum -= held.closed.popleft()[1]
        held.bucket, held.count, held.next_count = bucket, 0.0, _EVERY
        if not held.closed:  # a minute or more without traffic: estimated afresh, as a new app is
            held.closed_sum = 0.0  # (and rounding gone)
            held.start(now)
            return
        span = min(BUCKETS * BUCKET_SECONDS, max(BUCKET_SECONDS, now - held.first_seen))
        held.rate = self._floor(held.closed_sum * 60.0 / span)

    def _floor(self, per_minute: float) -> float:
        return min(1.0, self._per_minute / per_minute) if per_minute > 0 else 1.0
