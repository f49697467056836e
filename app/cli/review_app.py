"""The terminal app of `ragpulse review` (app/cli/review.py): the audit queue one trace after another."""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing
from typing import Any

import aiohttp
from rich.markup import escape
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widgets import Footer, Header, Static

from ragpulse.judging import ReviewRecord
from ragpulse.results import review_queue

RUBRIC = {
    "groundedness": "Groundedness against the chunks: 5 only what the chunks say · 4 minor unsupported detail · "
                    "3 some claims unsupported · 2 a key claim unsupported or contradicted · 1 contradicts them or mostly invented",
    "answer_relevancy": "Answer relevancy to the question: 5 answers it fully · 3 partly · 1 does not address it",
}


class ReviewApp(App[None]):
    TITLE = "ragpulse review"
    CSS = "VerticalScroll { height: 1fr; } #trace { padding: 0 1; } #prompt { height: auto; padding: 0 1; background: $panel; }"
    BINDINGS = [
        *(Binding(str(score), f"score({score})", show=False) for score in range(1, 6)),
        Binding("enter", "send", "send"),
        Binding("backspace", "rescore", "score again"),
        Binding("s", "skip", "skip"),
        Binding("q", "quit", "quit"),
    ]

    def __init__(self, path: str, *, target: str, token: str | None, reviewer: str | None, offline: bool) -> None:
        super().__init__()
        self._path = path
        self._url = target.rstrip("/") + "/v1/feedback"
        self._headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
        self._reviewer = reviewer
        self._offline = offline
        self._done: set[str] = set()
        self._current: dict[str, Any] | None = None
        self._scores: dict[str, int] = {}
        self._reviewed = self._skipped = 0
        self._message = ""

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll():
            yield Static(id="trace")
        yield Static(id="prompt")
        yield Footer()

    def on_mount(self) -> None:
        self._next()

    def _db(self) -> sqlite3.Connection:
        return review_queue.connect(self._path)

    def _next(self) -> None:
        with closing(self._db()) as db:
            found = review_queue.open_items(db, limit=1, skip=frozenset(self._done))
            waiting = review_queue.count_open(db)
        self._current = found[0] if found else None
        self._scores = {}
        self.sub_title = f"reviewed {self._reviewed} · skipped {self._skipped} · {max(0, waiting - len(self._done))} waiting"
        self._show()

    def _show(self) -> None:
        trace, prompt = self.query_one("#trace", Static), self.query_one("#prompt", Static)
        current = self._current
        if current is None:
            trace.update("Nothing waits for review: the audit queue is empty. [b]q[/b] quits.")
            prompt.update(self._message)
            return
        item = current["item"]
        lines = [f"[b]trace[/b] {escape(current['trace_id'])}   {escape(current['app'] or '-')}/{escape(current['route'] or '-')}",
                 "", "[b]Question[/b]", escape(item["question"]), "", "[b]Retrieved chunks[/b]"]
        for number, chunk in enumerate(item["chunks"], start=1):  # 1-based, as the answer's citations and badcases show
            lines.append(f"[{number}] {escape(chunk.get('id') or '-')}: {escape(chunk['text'])}")
        lines += ["", "[b]Answer[/b]", escape(item["answer"])]
        if len(self._scores) == 2:  # revealed only once the reviewer has scored
            verdict = current["judgment"]
            lines += ["", f"[b]The judge said[/b] ({escape(verdict['judge'])}, {escape(verdict['judge_model'])}): "
                      f"groundedness {verdict['groundedness']}, answer relevancy {verdict['answer_relevancy']}",
                      escape(verdict.get("groundedness_reason") or "")]
            for claim in verdict.get("claims") or []:
                lines.append(f"  - {escape(claim['verdict'])}: {escape(claim['claim'])}")
        trace.update("\n".join(lines))
        step = next((metric for metric in RUBRIC if metric not in self._scores), None)
        if step is not None:
            asked = f"press 1-5 · [b]{escape(RUBRIC[step])}[/b]"
        else:
            asked = (f"your scores: groundedness {self._scores['groundedness']}, answer relevancy "
                     f"{self._scores['answer_relevancy']} · [b]Enter[/b] sends · Backspace scores again · s skips")
        prompt.update("\n".join(part for part in (self._message, asked) if part))

    def action_score(self, score: int) -> None:
        if self._current is None:
            return
        step = next((metric for metric in RUBRIC if metric not in self._scores), None)
        if step is not None:
            self._scores[step] = score
            self._message = ""
            self._show()

    def action_rescore(self) -> None:
        self._scores = {}
        self._show()

    def action_skip(self) -> None:
        if self._current is not None:
            self._done.add(self._current["trace_id"])
            self._skipped += 1
            self._message = ""
            self._next()

    async def action_send(self) -> None:
        current = self._current
        if current is None or len(self._scores) < 2:
            return
        error = await (self._write_offline(current) if self._offline else self._send(current))
        if error:
            self._message = f"[red]not sent: {escape(error)}[/red] (Enter tries again)"
            self._show()
            return
        self._done.add(current["trace_id"])
        self._reviewed += 1
        self._message = f"sent the review of {escape(current['trace_id'])}"
        self._next()

    async def _send(self, current: dict[str, Any]) -> str | None:
        event: dict[str, Any] = {"type": "feedback", "kind": "review", "trace_id": current["trace_id"],
                                 "scores": dict(self._scores), "attributes": {"tool": "ragpulse review"}}
        if self._reviewer:
            event["user_id"] = self._reviewer
        try:
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
                async with session.post(self._url, json=event, headers=self._headers) as response:
                    if response.status != 200:
                        return f"{self._url} answered {response.status}: {(await response.text())[:200]}"
        except (aiohttp.ClientError, TimeoutError) as exc:
            return f"{self._url}: {exc or type(exc).__name__}"
        return None

    async def _write_offline(self, current: dict[str, Any]) -> str | None:
        record = ReviewRecord(trace_id=current["trace_id"], reviewed_at=time.time(),
                              groundedness=self._scores["groundedness"], answer_relevancy=self._scores["answer_relevancy"],
                              claims=[], comment=None, reviewer=self._reviewer)
        try:
            with closing(self._db()) as db:
                review_queue.write_review(db, record)
        except sqlite3.Error as exc:
            return str(exc)
        return None
