"""The judge sampler's policy applied to a trace in the compiled core (native/src/policy.rs) and the join's keep in the
trace table (keep_event, native/src/traces/bindings.rs), held to the Python they replaced (kept here as the
definition) on generated policies, traces and scores: the same base rate, stratum, kept bytes and table bytes."""

from __future__ import annotations

import pytest
from helpers.events import envelope, feedback_join
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from ragpulse.collector.events import Chunk, Envelope, LexicalScores, TraceEvent
from ragpulse.feedback.kept import unpack
from ragpulse.judging.sampler import SamplingPolicy, TraceFilter

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

APPS = (None, "shop", "bank")
ROUTES = (None, "returns", "billing", "vip")
_rate = st.floats(0.0, 1.0)
_share = st.none() | st.floats(0.0, 1.0)


def base_rate_of(policy: SamplingPolicy, event: TraceEvent) -> float:
    """The Python the core replaced."""
    overrides = policy.rate_overrides
    for key in ((event.app, event.route), (None, event.route), (event.app, None)):
        if key in overrides:
            return overrides[key]
    return policy.base_rate


def stratum(policy: SamplingPolicy, envelope: Envelope) -> str:
    """The Python the core replaced."""
    event = envelope.event
    assert isinstance(event, TraceEvent)
    if policy.always and any(matches(event) for matches in policy.always):
        return "always"
    scores = envelope.local_scores
    if scores is not None:
        if envelope.fallback_rule is None and (
            scores.number_mismatch or (scores.groundedness is not None and scores.groundedness < policy.flag_support_below)
        ):
            return "flagged"
        if (envelope.fallback_rule is not None and scores.context_relevance is not None
                and scores.context_relevance >= policy.over_refusal_context_at_least):
            return "over_refusal"
    return "none"


_policies = st.builds(
    lambda base, overrides, routes, below, at_least: SamplingPolicy(
        base_rate=base, rate_overrides=overrides, class_rates={},
        always=[TraceFilter(route=route).compile() for route in routes], flag_support_below=below,
        over_refusal_context_at_least=at_least),
    _rate, st.dictionaries(st.tuples(st.sampled_from(APPS), st.sampled_from(ROUTES)), _rate, max_size=6),
    st.lists(st.sampled_from(ROUTES[1:]), max_size=2), _rate, _rate)
_scores = st.none() | st.builds(LexicalScores, _share, _share, _share, st.booleans())
_traces = st.builds(
    lambda app, route, fallback, scores: envelope(TraceEvent(trace_id="t", query="q", answer="a", app=app, route=route),
                                                  fallback_rule=fallback, local_scores=scores),
    st.sampled_from(APPS), st.sampled_from(ROUTES), st.sampled_from((None, "explicit")), _scores)


@settings(max_examples=3000, deadline=None)
@given(_policies, st.lists(_traces, min_size=1, max_size=8))
def test_the_policys_base_rate_and_stratum_are_the_pythons(policy: SamplingPolicy, envelopes: list[Envelope]) -> None:
    for item in envelopes:
        assert isinstance(item.event, TraceEvent)
        assert policy.base_rate_of(item.event) == base_rate_of(policy, item.event)
        assert policy.stratum(item) == stratum(policy, item)


_attributes = st.dictionaries(st.sampled_from(("channel", "locale", "pad")), st.text(max_size=30), max_size=3)
_events = st.builds(
    lambda n, attributes, chunks: TraceEvent(trace_id=f"t{n}", query="q", answer="a", attributes=attributes,
                                             chunks=[Chunk(id=f"c{i}", text=text) for i, text in enumerate(chunks)]),
    st.integers(0, 5), _attributes, st.lists(st.text(max_size=40), max_size=3))


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(("add", "keep")), _events), max_size=30))
def test_the_trace_tables_keep_is_the_joins_python(operations: list[tuple[str, TraceEvent]]) -> None:
    """keep_event against the Python it replaced, each on a join of its own: the turn, what is kept (the event
    without its attributes, its chunks' texts held once: feedback/kept.py), its bytes and the table's."""
    crate, python = (feedback_join(CollectorRegistry(), max_traces=4, max_bytes=5000) for _ in range(2))
    table, pack = crate.kept_in
    reference, reference_pack = python.kept_in
    for operation, event in operations:
        if operation == "add":
            crate(envelope(event))
            python(envelope(event))
            continue
        turn, expected = table.get(event.trace_id), reference.get(event.trace_id)
        assert table.keep_event(event, ("base_rate",), pack) is turn
        if expected is not None:  # the Python: the turn looked up, the event packed and kept
            reference.keep(expected, *reference_pack(event), ("base_rate",))
        assert (turn is None) == (expected is None)
        if turn is not None and expected is not None:
            assert (unpack(turn.payload), turn.payload_size, turn.kept, turn.sampled_by) == (
                unpack(expected.payload), expected.payload_size, expected.kept, expected.sampled_by)
        assert table.bytes == reference.bytes == sum(table[trace_id].size for trace_id in table)
