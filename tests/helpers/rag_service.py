"""A small real RAG service for the probe tests: a keyword retriever over a toy knowledge base behind
an HTTP endpoint, and an extractive "LLM" (the answer is the best chunk's first sentence). POST /query
{"query"} -> {"answer", "chunks": [{"id", "text", "score"}]}, the `json` preset's shape; POST
/v1/chat/completions answers in the OpenAI shape with the chunks under "citations". `degraded = True`
drops the best chunk from every retrieval, as a broken index or a bad embedding release would.

Also a command, to try `ragpulse probe run` by hand (docs/probes.md, "Try a probe locally"):
`.venv/bin/python tests/helpers/rag_service.py --port 8765` serves until Ctrl-C."""

from __future__ import annotations

import argparse
import asyncio
import re
import threading
from typing import Any

from aiohttp import web

KNOWLEDGE_BASE = {
    "kb-return-window": "Unused items can be returned within 30 days of delivery.",
    "kb-return-label": "A prepaid return label is emailed within 24 hours of starting a return.",
    "kb-restocking": "Opened electronics carry a 10% restocking fee unless defective.",
    "kb-warranty": "Small appliances carry a 2-year manufacturer warranty against defects.",
    "kb-water": "Water damage and accidental damage are not covered by the warranty.",
    "kb-claim": "Warranty claims need a photo of the defect and the serial number.",
    "kb-standard": "Standard delivery takes 3 to 5 business days and is free over $35.",
    "kb-express": "Express delivery takes 1 to 2 business days and costs $12.99.",
    "kb-canada": "Orders to Canada take 5 to 8 business days; duties are shown at checkout.",
    "kb-tracking": "Every shipped order has a tracking link under Orders.",
    "kb-missing": "A parcel marked delivered but missing: wait 48 hours, then open a missing-package request.",
    "kb-address": "The delivery address can be changed until the order ships.",
    "kb-giftcard": "Gift cards never expire and work on sale items.",
    "kb-pricematch": "We match a lower price from a major retailer within 7 days of purchase.",
    "kb-student": "Verified students get 10% off full-price items.",
    "kb-stores": "Our stores open Monday to Saturday from 9 am to 8 pm.",
}
STOPWORDS = frozenset("a an the and or of to in on for is are be can do does my i you your how what when where "
                      "which who with from by at it its if long much many".split())
FALLBACK = "I'm sorry, I couldn't find any information about that."
TOP = 3


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9$%]+", text.lower()) if w not in STOPWORDS}


class RagService:
    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host, self.port = host, port  # port 0: a free one, known once it listens
        self.degraded = False
        self.requests: list[dict[str, Any]] = []  # headers and body of every request, for the tests
        self._index = {chunk_id: words(text) for chunk_id, text in KNOWLEDGE_BASE.items()}
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._error: OSError | None = None
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the RAG service did not start within 10 s")
        if self._error is not None:  # e.g. the port is taken
            raise self._error

    def retrieve(self, query: str) -> list[tuple[str, float]]:
        asked = words(query)
        scored = [(chunk_id, len(asked & terms)) for chunk_id, terms in self._index.items()]
        ranked = sorted((pair for pair in scored if pair[1] > 0), key=lambda pair: -pair[1])  # stable: KB order on ties
        if self.degraded:
            ranked = ranked[1:]
        return [(chunk_id, float(score)) for chunk_id, score in ranked[:TOP]]

    def _answer(self, query: str) -> tuple[str, list[dict[str, Any]]]:
        found = self.retrieve(query)
        chunks = [{"id": chunk_id, "text": KNOWLEDGE_BASE[chunk_id], "score": score} for chunk_id, score in found]
        return (chunks[0]["text"] if chunks else FALLBACK), chunks

    async def _query(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append({"headers": dict(request.headers), "body": body})
        answer, chunks = self._answer(body["query"])
        return web.json_response({"answer": answer, "chunks": chunks})

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append({"headers": dict(request.headers), "body": body})
        answer, chunks = self._answer(body["messages"][-1]["content"])
        return web.json_response({"choices": [{"message": {"role": "assistant", "content": answer}}], "citations": chunks})

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_post("/query", self._query)
        app.router.add_post("/v1/chat/completions", self._chat)
        self._runner = web.AppRunner(app)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, self.host, self.port)
        try:
            self._loop.run_until_complete(site.start())
        except OSError as exc:
            self._error = exc
            self._ready.set()
            return
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        self._loop.run_forever()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)


def main() -> None:
    parser = argparse.ArgumentParser(description="A toy RAG service to probe: POST /query {\"query\"} -> "
                                                 "{\"answer\", \"chunks\"}, the probe target preset `json`.")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on (default: loopback only)")
    parser.add_argument("--port", type=int, default=8765, help="the port (default 8765; 0: a free one)")
    args = parser.parse_args()
    try:
        service = RagService(args.host, args.port)
    except OSError as exc:
        raise SystemExit(f"rag_service: {exc}") from None
    print(f"rag_service: listening on {service.url} (POST /query; POST /v1/chat/completions); Ctrl-C stops.", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        service.close()


if __name__ == "__main__":
    main()
