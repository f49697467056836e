"""The LlamaIndex apps' knowledge base and question (test_llamaindex.py, and the apps of instrumented_apps.py), a
bag-of-words embedding (crc32 buckets) that lets retrieval rank for real offline, and the chunks it ranks first."""

from __future__ import annotations

import math
import zlib

from llama_index.core.embeddings import BaseEmbedding

DIMENSIONS = 64
TEXTS = {
    "returns": "Returns are accepted within 30 days of delivery for unused items.",
    "warranty": "The warranty covers manufacturing defects for 2 years.",
    "shipping": "Standard shipping takes 3 to 5 business days.",
}
QUESTION = "How many days do I have for returns of unused items?"


def vector(text: str) -> list[float]:
    v = [0.0] * DIMENSIONS
    for word in text.lower().replace(".", " ").replace("?", " ").split():
        v[zlib.crc32(word.encode()) % DIMENSIONS] += 1.0
    return v


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


class WordEmbedding(BaseEmbedding):
    def _get_query_embedding(self, query: str) -> list[float]:
        return vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return vector(text)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return vector(query)


def expected_chunks() -> list[tuple[str, float]]:
    """The two texts closest to QUESTION, with their cosine: what the query engine retrieves (similarity_top_k=2)."""
    scored = sorted(((t, cosine(vector(QUESTION), vector(t))) for t in TEXTS.values()), key=lambda p: -p[1])
    return scored[:2]
