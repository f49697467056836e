"""A traffic generator: a realistic e-commerce support bot (returns, warranty, shipping...).

Used by `ragpulse demo`, `ragpulse send` and the benchmarks. It builds v1
events from a small knowledge base: a query per intent, chunks retrieved with
plausible scores, and an answer that is grounded in them, a fallback, or (at
`hallucination_share`) one that changes a fact of the chunks. From
`drift_at_seconds` on, a new release ships with a worse retriever: lower
scores, more fallbacks and more hallucinations, as a regression looks in
production.

Users behave like people, each reaction at its share in the profile: after a
hallucinated answer some rephrase the question, escalate or give a thumbs
down; after a fallback some abandon, escalate or ask the same again; after a
good answer a few give a thumbs up or copy it, some ask a follow-up, most
leave without a word (a silent accept once the session is idle). `truth`
tallies the signals generated, so a test can hold what ragpulse derives
against it.

Grounded answers cite their chunk at `cite_share`, as "[1]" after the last
sentence; of those, `wrong_citation_share` cite a chunk that does not say it
and `dangling_citation_share` a rank beyond the chunks retrieved. Citations
are drawn from a random stream of their own, so a seed's other draws are the
same with or without them; `truth` counts cited_answers, citation_correct,
citation_wrong and citation_dangling.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
import zlib
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import aiohttp
import msgspec

# intent -> (queries, facts as (chunk text, grounded answer, hallucinated answer))
_KNOWLEDGE: dict[str, tuple[list[str], list[tuple[str, str, str]]]] = {
    "returns": (
        ["How do I return a pair of shoes?", "Can I return an opened item?", "What is your return window?",
         "Do I have to pay for return shipping?"],
        [("Returns policy: unused items in their original packaging can be returned within 30 days of delivery. "
          "Start a return from Orders > Return item; we email a prepaid label within 24 hours.",
          "You can return unused items in their original packaging within 30 days of delivery. Start from Orders > "
          "Return item and you'll get a prepaid label by email within 24 hours.",
          "You can return any item, even used, within 90 days of delivery, and we refund the shipping twice."),
         ("Opened electronics can be returned within 14 days if all accessories are included; a 10% restocking fee "
          "applies to opened items without a defect.",
          "Opened electronics can be returned within 14 days with all accessories; a 10% restocking fee applies "
          "unless the item is defective.",
          "Opened electronics can be returned within 60 days and there is never a restocking fee.")],
    ),
    "warranty": (
        ["Is my blender under warranty?", "How long is the warranty on headphones?", "Does the warranty cover water damage?",
         "How do I claim warranty for a broken laptop?"],
        [("Warranty: all small appliances and electronics carry a 2-year manufacturer warranty covering defects in "
          "materials and workmanship. Accidental damage and water damage are not covered.",
          "Small appliances and electronics have a 2-year warranty for manufacturing defects; accidental and water "
          "damage are not covered.",
          "Everything has a lifetime warranty that also covers water damage and accidents."),
         ("To claim warranty, open Orders > Get help > Warranty claim, attach a photo of the defect and the serial "
          "number. Approved claims get a replacement within 7 business days.",
          "Open Orders > Get help > Warranty claim, attach a photo and the serial number; approved claims get a "
          "replacement within 7 business days.",
          "Call our hotline and a technician visits you the next day; claims are approved instantly.")],
    ),
    "shipping": (
        ["When will my order arrive?", "How much is express shipping?", "Do you ship to Canada?",
         "Can I change my delivery address?"],
        [("Shipping: standard delivery takes 3-5 business days and is free over $35. Express delivery takes 1-2 "
          "business days and costs $12.99.",
          "Standard delivery takes 3-5 business days (free over $35); express takes 1-2 business days for $12.99.",
          "Standard delivery takes 2 weeks and express costs $4.99."),
         ("We ship to the United States and Canada. Orders to Canada take 5-8 business days and duties are "
          "calculated at checkout.",
          "Yes, we ship to Canada: delivery takes 5-8 business days and duties are shown at checkout.",
          "We ship worldwide in 2 days with no duties.")],
    ),
    "order_status": (
        ["Where is my order?", "My package says delivered but I didn't get it", "How do I track my parcel?"],
        [("Tracking: every shipped order has a tracking link under Orders. If a package shows delivered but is "
          "missing, wait 48 hours, then open a missing-package request.",
          "Use the tracking link under Orders. If it shows delivered but you don't have it, wait 48 hours and then "
          "open a missing-package request.",
          "Packages marked delivered are refunded automatically after 1 hour.")],
    ),
}
# The answers the generator invents: a judge grading demo traffic by rule knows the truth from them.
HALLUCINATED_ANSWERS = frozenset(fact[2] for _, facts in _KNOWLEDGE.values() for fact in facts)
_NOISE = [
    "Gift cards never expire and can be used on any order, including sale items.",
    "Our stores are open Monday to Saturday from 9 am to 8 pm.",
    "Price match: we match a lower price from a major retailer within 7 days of purchase.",
    "Student discount: verified students get 10% off full-price items.",
]
# A question in other words, as a user asks again when the answer did not help (tests/data/session_turns.yaml
# measures how often the detector recognises one).
_REPHRASES = {
    "How do I return a pair of shoes?": "What's the process to return shoes?",
    "Can I return an opened item?": "Is it possible to return something I already opened?",
    "What is your return window?": "How long is the return window for an item?",
    "Do I have to pay for return shipping?": "Is return shipping something I have to pay?",
    "Is my blender under warranty?": "Is my blender covered by the warranty?",
    "How long is the warranty on headphones?": "What warranty do headphones have?",
    "Does the warranty cover water damage?": "Is water damage covered by the warranty?",
    "How do I claim warranty for a broken laptop?": "My laptop broke, how do I make a warranty claim?",
    "When will my order arrive?": "When does my order arrive?",
    "How much is express shipping?": "What does express shipping cost?",
    "Do you ship to Canada?": "Do you ship orders to Canada?",
    "Can I change my delivery address?": "How do I change the delivery address?",
    "Where is my order?": "Where can I see my order?",
    "My package says delivered but I didn't get it": "Package says delivered but I didn't get it yet",
    "How do I track my parcel?": "Where can I track my parcel?",
}
_FOLLOW_UPS = {
    "returns": ["And for headphones?", "What about gift items?"],
    "warranty": ["And for laptops?", "What about accidental damage?"],
    "shipping": ["How about Mexico?", "And standard shipping?"],
    "order_status": ["And for a second parcel?", "What about my other order?"],
}
_UNKNOWN_QUERIES = ["Do you sell refurbished drones?", "Can I pay with cryptocurrency?", "Is there a store in Lisbon?"]
_FALLBACK_ANSWERS = [
    "I'm sorry, I couldn't find any information about that in our help center.",
    "Sorry, I don't have information on that. Would you like to talk to an agent?",
]
_MODELS = ["gpt-4o-mini", "llama-3.1-70b"]


@dataclass(frozen=True, slots=True)
class TrafficProfile:
    fallback_share: float = 0.08
    hallucination_share: float = 0.05
    drift_at_seconds: float | None = None
    drift_fallback_share: float = 0.25
    drift_hallucination_share: float = 0.20
    app: str = "support-bot"
    # Reactions (False: one trace per call and no feedback, as the benchmarks want).
    users_react: bool = True
    rephrase_after_bad: float = 0.4
    escalation_after_bad: float = 0.15
    thumbs_down_after_bad: float = 0.15
    abandon_after_fallback: float = 0.3
    escalation_after_fallback: float = 0.2
    repeat_after_fallback: float = 0.1
    thumbs_up_after_good: float = 0.05
    copy_after_good: float = 0.03
    follow_up_after_good: float = 0.15
    cite_share: float = 0.5
    wrong_citation_share: float = 0.2
    dangling_citation_share: float = 0.1


@dataclass(slots=True)
class _NextTurn:
    session_id: str
    user_id: str
    query: str
    intent: str | None  # None: a question the knowledge base cannot answer
    kind: str  # rephrase, repeat or follow_up

class TrafficGenerator:
    """Yields v1 events as dicts; deterministic for a given seed and call sequence."""

    def __init__(self, profile: TrafficProfile | None = None, *, seed: int | None = None) -> None:
        self.profile = profile or TrafficProfile()
        self._random = random.Random(seed)
        self._citing = random.Random(None if seed is None else f"{seed}-citations")
        self._started = time.monotonic()
        self._waiting: deque[_NextTurn] = deque()  # sessions whose user asks again
        self._closing = False
        self.truth: Counter[str] = Counter()  # signals generated, as ragpulse names them

    def drifted(self) -> bool:
        drift_at = self.profile.drift_at_seconds
        return drift_at is not None and time.monotonic() - self._started >= drift_at

    def events(self) -> list[dict[str, Any]]:
        """One turn: a trace (a new session's question or a waiting session's next one), sometimes
        followed by feedback on it."""
        rnd, profile = self._random, self.profile
        drifted = self.drifted()
        fallback_share = profile.drift_fallback_share if drifted else profile.fallback_share
        hallucination_share = profile.drift_hallucination_share if drifted else profile.hallucination_share
        if self._waiting and (self._closing or rnd.random() < 0.5):
            turn = self._waiting.popleft()
            if turn.kind != "follow_up":
                self.truth[turn.kind] += 1  # a signal on the session's previous answer
        else:
            turn = None
        trace_id = uuid.UUID(int=rnd.getrandbits(128)).hex
        score_shift = -0.25 if drifted else 0.0
        outcome = "answer"
        if turn is not None:
            session_id, user_id, intent = turn.session_id, turn.user_id, turn.intent
            unanswerable = intent is None
        else:
            session_id, user_id = f"s-{rnd.getrandbits(48):012x}", f"u-{rnd.randrange(5_000):04d}"
            unanswerable = rnd.random() < fallback_share
            intent = None if unanswerable else rnd.choice(list(_KNOWLEDGE))
        if unanswerable:
            outcome = "fallback"
            query = turn.query if turn is not None else rnd.choice(_UNKNOWN_QUERIES)
            chunks = [] if rnd.random() < 0.3 else self._chunks(None, score_shift)
            answer = rnd.choice(_FALLBACK_ANSWERS)
        else:
            assert intent is not None
            queries, facts = _KNOWLEDGE[intent]
            query = turn.query if turn is not None else rnd.choice(queries)
            fact = rnd.choice(facts)
            chunks = self._chunks(fact[0], score_shift)
            if rnd.random() < hallucination_share:
                outcome = "hallucination"
                answer = fact[2]
            else:
                answer = self._cite(fact[1], len(chunks))
        completion_tokens = max(8, len(answer) // 4)
        trace: dict[str, Any] = {
            "type": "trace",
            "trace_id": trace_id,
            "timestamp": int(time.time() * 1000),
            "session_id": session_id,
            "user_id": user_id,
            "app": profile.app,
            "route": intent or "unknown",
            "model": _MODELS[0] if rnd.random() < 0.8 else _MODELS[1],
            "release": "2026.11.2" if drifted else "2026.11.1",
            "query": query,
            "chunks": chunks,
            "answer": answer,
            "latency_ms": round(rnd.lognormvariate(7.0, 0.45) + (400 if drifted else 0), 1),
            "usage": {"prompt_tokens": 180 + sum(len(c["text"]) for c in chunks) // 4, "completion_tokens": completion_tokens},
            "attributes": {"channel": rnd.choice(["web", "app"]), "locale": "en-US", "demo_outcome": outcome},
        }
        events = [trace]
        if profile.users_react:
            events.extend(self._react(trace, outcome, intent))
        return events

    def finish(self) -> list[dict[str, Any]]:
        """The turns still planned, and the reactions to them (which plan no further turns): after
        this, `truth` is the whole of what was generated."""
        self._closing = True
        events: list[dict[str, Any]] = []
        while self._waiting:
            events.extend(self.events())
        return events

    def _react(self, trace: dict[str, Any], outcome: str, intent: str | None) -> list[dict[str, Any]]:
        """What the user does after this answer: feedback now, or a next turn later, or nothing."""
        rnd, profile, truth = self._random, self.profile, self.truth
        query, session_id, user_id = trace["query"], trace["session_id"], trace["user_id"]
        draw, more = rnd.random(), not self._closing
        if outcome == "hallucination":
            if draw < profile.rephrase_after_bad and query in _REPHRASES and more:
                self._waiting.append(_NextTurn(session_id, user_id, _REPHRASES[query], intent, "rephrase"))
                return []
            draw -= profile.rephrase_after_bad
            if draw < profile.escalation_after_bad:
                return [self._signal(trace, "escalation", "human_agent")]
            draw -= profile.escalation_after_bad
            if draw < profile.thumbs_down_after_bad:
                return [self._signal(trace, "thumbs", "down")]
        elif outcome == "fallback":
            if draw < profile.abandon_after_fallback:
                return [self._signal(trace, "abandon")]
            draw -= profile.abandon_after_fallback
            if draw < profile.escalation_after_fallback:
                return [self._signal(trace, "escalation", "human_agent")]
            draw -= profile.escalation_after_fallback
            if draw < profile.repeat_after_fallback and more:
                self._waiting.append(_NextTurn(session_id, user_id, query, None, "repeat"))
            return []  # a fallback is never accepted by silence
        else:
            if draw < profile.thumbs_up_after_good:
                return [self._signal(trace, "thumbs", "up")]
            draw -= profile.thumbs_up_after_good
            if draw < profile.copy_after_good:
                return [self._signal(trace, "copy")]
            draw -= profile.copy_after_good
            if draw < profile.follow_up_after_good and intent is not None and more:
                # A follow-up says nothing against this answer: it is settled silently at the session's end.
                follow_up = rnd.choice([q for q in _FOLLOW_UPS[intent] if q != query])  # never the same again
                self._waiting.append(_NextTurn(session_id, user_id, follow_up, intent, "follow_up"))
        truth["silent_accept"] += 1
        return []

    def _cite(self, answer: str, chunks: int) -> str:
        """A grounded answer (its chunk ranks first), cited as the profile's shares say."""
        profile, draw = self.profile, self._citing.random()
        if draw >= profile.cite_share:
            return answer
        self.truth["cited_answers"] += 1
        draw = self._citing.random()
        if draw < profile.wrong_citation_share:
            self.truth["citation_wrong"] += 1
            return f"{answer} [{self._citing.randrange(2, chunks + 1)}]"  # a noise chunk's rank
        if draw < profile.wrong_citation_share + profile.dangling_citation_share:
            self.truth["citation_dangling"] += 1
            return f"{answer} [{chunks + 3}]"
        self.truth["citation_correct"] += 1
        return f"{answer} [1]"

    def _signal(self, trace: dict[str, Any], kind: str, value: str | None = None) -> dict[str, Any]:
        name = f"thumbs_{value}" if kind == "thumbs" else kind
        self.truth[name] += 1
        feedback: dict[str, Any] = {"type": "feedback", "trace_id": trace["trace_id"], "session_id": trace["session_id"],
                                    "kind": kind}
        if value is not None:
            feedback["value"] = value
        return feedback

    def _chunks(self, relevant: str | None, score_shift: float) -> list[dict[str, Any]]:
        rnd = self._random
        texts = rnd.sample(_NOISE, 3)
        if relevant is not None:
            texts.insert(0, relevant)
        now_ms = int(time.time() * 1000)
        chunks = []
        for rank, text in enumerate(texts):
            base = 0.86 - 0.12 * rank if relevant is not None else 0.42 - 0.05 * rank
            chunks.append({
                "id": f"kb-{zlib.crc32(text.encode()) % 100_000:05d}",
                "text": text,
                "score": round(min(1.0, max(0.0, base + score_shift + rnd.uniform(-0.05, 0.05))), 4),
                "source": "help-center",
                "updated_at": now_ms - rnd.randrange(1, 120) * 86_400_000,
            })
        return chunks


@dataclass(slots=True)
class SendStats:
    sent: int = 0
    accepted: int = 0
    rejected: int = 0
    retried_requests: int = 0


async def send_traffic(
    target: str,
    generator: TrafficGenerator,
    *,
    rate: float,
    duration: float | None = None,
    count: int | None = None,
    batch_events: int | None = None,
    token: str | None = None,
    stats: SendStats | None = None,
    on_batch: Callable[[SendStats], None] | None = None,
) -> SendStats:
    """POST generated events as NDJSON to `target`/v1/events at about `rate` events/s.

    Stops after `duration` seconds or `count` events, whichever comes first.
    Batches default to a tenth of a second of traffic, so the pace is smooth.
    A 429/503 answer is retried after its Retry-After delay, so nothing is lost.
    """
    stats = stats or SendStats()
    batch_events = batch_events or min(500, max(1, round(rate / 10)))
    url = target.rstrip("/") + "/v1/events"
    headers = {"Content-Type": "application/x-ndjson"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    started = time.monotonic()
    async with aiohttp.ClientSession(headers=headers) as session:
        while (count is None or stats.sent < count) and (duration is None or time.monotonic() - started < duration):
            batch: list[dict[str, Any]] = []
            while len(batch) < batch_events and (count is None or stats.sent + len(batch) < count):
                batch.extend(generator.events())
            if count is not None:
                del batch[count - stats.sent :]
            body = b"\n".join(msgspec.json.encode(event) for event in batch)
            while True:
                async with session.post(url, data=body) as response:
                    if response.status in (429, 503):
                        stats.retried_requests += 1
                        await asyncio.sleep(float(response.headers.get("Retry-After", "1")))
                        continue
                    try:
                        payload = await response.json(content_type=None)
                    except ValueError:
                        payload = None
                    if response.status >= 500 or not isinstance(payload, dict) or "accepted" not in payload:
                        raise RuntimeError(f"{url} answered {response.status}: {payload if payload is not None else 'not JSON'}"
                                           " (is it a ragpulse sidecar? its token, if it has one: --token)")
                    break
            stats.sent += len(batch)
            stats.accepted += payload["accepted"]
            stats.rejected += payload.get("rejected", 0)
            if on_batch is not None:
                on_batch(stats)
            # Pace by the events sent so far, so the rate holds whatever the batch size.
            ahead = stats.sent / rate - (time.monotonic() - started)
            if ahead > 0:
                await asyncio.sleep(ahead)
    return stats
