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

The floor is in the compiled core (native/src/floor.rs): the judge sampler's core asks it for every judgeable trace.
"""

from __future__ import annotations

from ragpulse import _native

# RoutineFloor(per_minute, clock, max_apps, *, scale=1.0): rate(app, base_rate) counts one judgeable trace of the app
# and returns its routine rate; scale (readable and writable) and set_partition_share(owned, total) as above.
RoutineFloor = _native.RoutineFloor
