"""The realistic OTLP payload's texts (issue 47): distinct questions over a recurring knowledge base, answers grounded
in their first chunk except ~5% that state a number no chunk has and a claim none makes.

The bench payload (otlp_payload.py) asks one question with one wrong answer, so nearly every trace is flagged and
judged. Here, at the shipped defaults, only the routine sample (5%) and half of the flagged traces (~2.5%) are: about
1,500 of 20,000. The knowledge base is 16 brands x 25 products x 5 topics (2,000 chunks of 300-450 characters) that
recur across traces as a real one does; a question names its order number, so no two are alike; sessions hold 1-4
turns, each about another product.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import NamedTuple

BRANDS = ("Acme", "Borealis", "Cobalt", "Dunmore", "Elbrook", "Fenwick", "Galvan", "Harrow", "Ixion", "Juniper",
          "Kestrel", "Lumen", "Marlow", "Northway", "Orrin", "Pellam")
PRODUCTS = ("headphones", "laptop", "blender", "kettle", "backpack", "monitor", "keyboard", "smartwatch", "tent",
            "espresso machine", "vacuum cleaner", "desk lamp", "air purifier", "drone", "router", "bicycle helmet",
            "electric toothbrush", "camera", "speaker", "office chair", "rice cooker", "tablet", "printer",
            "hair dryer", "running shoes")
# topic: (chunk, grounded answer, question); {b} brand, {p} product, {n} and {m} the topic's two numbers.
TOPICS = {
    "returns": (
        "{b} {p} returns: unused items can be returned within {n} days of delivery for a full refund. Opened items "
        "are accepted when every accessory and the original packaging are included. Refunds reach the original "
        "payment method within {m} business days after the warehouse inspects the item. After the window closes, "
        "store credit may be offered at the discretion of customer service.",
        "You can return the {b} {p} within {n} days of delivery, with all accessories and the original packaging; "
        "the refund reaches your original payment method within {m} business days after inspection.",
        "I ordered the {b} {p} (order {o}) and changed my mind. How long do I have to return it?"),
    "warranty": (
        "The {b} {p} comes with a limited warranty of {n} months from the date of purchase. The warranty covers "
        "manufacturing defects in materials and workmanship under normal use. It does not cover accidental damage, "
        "water damage or normal wear. Claims are handled by the service centre, which answers within {m} days "
        "and repairs or replaces the defective unit at no charge.",
        "The {b} {p} has a {n}-month limited warranty from the purchase date covering manufacturing defects; the "
        "service centre answers claims within {m} days and repairs or replaces the unit at no charge.",
        "My {b} {p} from order {o} stopped working. Is it still under warranty, and how long does a claim take?"),
    "shipping": (
        "Standard shipping for the {b} {p} takes {n} business days within the country and is free on orders above "
        "the minimum amount. Express shipping arrives in {m} business days for an extra fee. Orders placed before "
        "noon leave the warehouse the same day. A tracking number is sent by email as soon as the parcel is handed "
        "to the carrier.",
        "Standard shipping of the {b} {p} takes {n} business days, express {m} business days; orders placed before "
        "noon leave the warehouse the same day and you get a tracking number by email.",
        "When will the {b} {p} of order {o} arrive if I choose standard shipping?"),
    "battery": (
        "The {b} {p} battery lasts up to {n} hours on a full charge in typical use. A full charge takes about {m} "
        "hours with the supplied charger. Battery life depends on settings, temperature and age. The battery keeps "
        "most of its capacity for several hundred charge cycles and can be replaced by the service centre.",
        "The {b} {p} battery lasts up to {n} hours on a full charge, and charging fully takes about {m} hours with "
        "the supplied charger.",
        "How long does the battery of the {b} {p} last, and how long does it take to charge? Asking about order {o}."),
    "care": (
        "To clean the {b} {p}, unplug it and wipe the outside with a soft damp cloth. Do not use abrasive cleaners "
        "or solvents. Removable parts can be washed in warm soapy water and must dry for {n} hours before use. "
        "The manufacturer recommends a full check every {m} months to keep the product in good condition.",
        "Unplug the {b} {p} and wipe it with a soft damp cloth, without abrasive cleaners; washed parts must dry "
        "for {n} hours, and a full check every {m} months is recommended.",
        "What is the right way to clean the {b} {p} I got in order {o}?"),
}
UNSUPPORTED = ("{b} also covers accidental damage and offers free lifetime repairs for the {p}, for {n} years at "
               "no extra cost.")
UNSUPPORTED_SHARE = 0.05


class Turn(NamedTuple):
    question: str
    docs: list[tuple[str, str, float]]  # (id, content, score), best first
    answer: str
    session: str


def _numbers(brand: int, product: int, topic: int) -> tuple[int, int]:
    """The topic's two numbers for one product: fixed, so that a chunk is the same text in every trace."""
    rnd = random.Random(brand * 10_000 + product * 10 + topic)
    return rnd.randrange(2, 60), rnd.randrange(1, 12)


def _chunk(brand: int, product: int, topic: int) -> tuple[str, str]:
    name = list(TOPICS)[topic]
    n, m = _numbers(brand, product, topic)
    return f"kb-{brand}-{product}-{name}", TOPICS[name][0].format(b=BRANDS[brand], p=PRODUCTS[product], n=n, m=m)


def turns(rnd: random.Random) -> Iterator[Turn]:
    """Endless turns: sessions of 1-4 questions, each on another product and topic of the knowledge base."""
    session = 0
    while True:
        session += 1
        for _ in range(rnd.randint(1, 4)):
            brand, product, topic = rnd.randrange(len(BRANDS)), rnd.randrange(len(PRODUCTS)), rnd.randrange(len(TOPICS))
            others = [t for t in range(len(TOPICS)) if t != topic]
            rnd.shuffle(others)
            neighbours = rnd.sample([p for p in range(len(PRODUCTS)) if p != product], 2)
            keys = [(brand, product, topic), (brand, product, others[0]), (brand, product, others[1]),
                    (brand, neighbours[0], topic), (brand, neighbours[1], topic)]
            top = rnd.uniform(0.78, 0.92)
            docs = [(*_chunk(*key), round(top - rank * rnd.uniform(0.03, 0.08), 4)) for rank, key in enumerate(keys)]
            name = list(TOPICS)[topic]
            n, m = _numbers(brand, product, topic)
            words = {"b": BRANDS[brand], "p": PRODUCTS[product]}
            question = TOPICS[name][2].format(**words, o=rnd.randrange(100_000, 1_000_000))
            answer = TOPICS[name][1].format(**words, n=n, m=m)
            if rnd.random() < UNSUPPORTED_SHARE:
                absent = next(x for x in range(n + 7, n + 200) if all(str(x) not in text for _, text, _ in docs))
                answer = UNSUPPORTED.format(**words, n=absent)
            yield Turn(question, docs, answer, f"rs-{session}")
