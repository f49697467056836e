"""Families several components count into, made once per registry.

Each component makes its own telemetry from the registry it is handed, but some family sets are shared: the
pipeline door's (every source), the OTLP source's (its receivers, the span intake, the Kafka source), the judge's.
prometheus_client refuses a family registered twice on one registry, so the second component to ask for a set
must get the first one's: `shared(registry, IntakeMetrics)` is the registry's one `IntakeMetrics(registry)`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

from prometheus_client import CollectorRegistry

T = TypeVar("T")

# Weak: a registry dropped (a test's, a probe's) takes its families with it.
_MADE: WeakKeyDictionary[CollectorRegistry, dict[tuple[Any, ...], Any]] = WeakKeyDictionary()


def shared(registry: CollectorRegistry, make: Callable[..., T], *args: Hashable) -> T:
    """`make(registry, *args)`, made on the first call for this registry, `make` and `args`, and returned again
    on the next ones. The arguments are part of the key: other arguments make another set, which prometheus_client
    refuses if its family names are the same."""
    made = _MADE.setdefault(registry, {})
    key = (make, *args)
    if key not in made:
        made[key] = make(registry, *args)
    found: T = made[key]
    return found
