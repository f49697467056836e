"""Bad cases for a terminal: a table of many, or one in full."""

from __future__ import annotations

import textwrap
import time
from typing import Any


def _clip(text: str | None, width: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _score(value: Any) -> str:
    return "-" if value is None else str(value)


def table(records: list[dict[str, Any]]) -> str:
    if not records:
        return "no bad cases match"
    header = ("judged (UTC)", "stage", "app/route", "grnd", "rel", "ctx", "priority", "trace id", "question")
    rows = [
        (
            time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(r["judged_at"])),
            r["stage"],
            _clip(f"{r['app'] or '-'}/{r['route'] or '-'}", 24),
            _score(r["groundedness"]),
            _score(r["answer_relevancy"]),
            _score(r["context_relevance"]),
            r["priority"],
            _clip(r["trace_id"], 40),  # whole for the usual 32-hex ids: `badcases show` takes it, or a prefix
            _clip(r["query"], 40),
        )
        for r in records
    ]
    widths = [max(len(str(row[i])) for row in (header, *rows)) for i in range(len(header))]
    lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in (header, *rows)]
    return "\n".join(lines)


def _refusal(r: dict[str, Any]) -> str:
    """A fallback's verdict: right to refuse or not, from the relevance of what was retrieved."""
    if r["stage"] == "over_refusal":
        return "refusal: OVER-REFUSAL (a relevant chunk was retrieved; the answer was there)"
    return "refusal: correct abstention (nothing relevant was retrieved: a knowledge gap)"


def _verdict(r: dict[str, Any]) -> str:
    """ HALLUCINATION or UNCERTAIN, with the judge's confidence where it reports one (older records have neither)."""
    label = "hallucination" if r["hallucination"] else r.get("verdict") or ""
    shown = f" {label.upper()}" if label in ("hallucination", "uncertain") else ""
    return shown + (f" (confidence {r['confidence']:.2f})" if r.get("confidence") is not None else "")


def _numbers(indices: list[int]) -> list[str]:
    """Chunks by their 1-based rank, as answers cite them ("[1]") and the chunks are listed: records hold
    0-based indices."""
    return [f"[{i + 1}]" for i in indices]


def _citations(citations: list[dict[str, Any]]) -> list[str]:
    """Each cited sentence: WRONG CITATION where the chunk it cites does not support it."""
    lines = []
    for c in citations:
        cited = ", ".join([*_numbers(c["chunks"]), *(f"{d} (dangling)" for d in c["dangling"])])
        label = {"unsupported": "WRONG CITATION", "dangling": "DANGLING CITATION"}.get(c["verdict"], c["verdict"])
        lines.append(f"citation {label}: {_clip(c['sentence'], 80)!r} cites {cited}"
                     + (f" ({c['reason']})" if c.get("reason") else ""))
    return lines


def detail(r: dict[str, Any]) -> str:
    def block(text: str) -> str:
        return textwrap.indent(textwrap.fill(" ".join(text.split()), 96) or "(empty)", "    ")

    out = [
        f"trace {r['trace_id']}  stage: {r['stage']}  priority: {r['priority']}",
        f"judged {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime(r['judged_at']))} by {r['judge']} "
        f"({r['judge_model']}, {r['prompt_version']}, {r['prompt_tokens']}+{r['completion_tokens']} tokens)",
        "  ".join(f"{name} {r[key] or 'not reported'}"  # a label the trace did not carry is not reported, not "None"
                  for name, key in (("app", "app"), ("route", "route"), ("model", "model"), ("release", "release"),
                                    ("session", "session_id"))),
        "",
        _refusal(r) if r["fallback"] else
        f"groundedness {_score(r['groundedness'])}/5{_verdict(r)}: {r['groundedness_reason']}",
        f"answer relevancy {_score(r['answer_relevancy'])}/5{' (fallback)' if r['fallback'] else ''}: {r['answer_relevancy_reason']}",
        f"context relevance {_score(r['context_relevance'])}/3 (best chunk): {r['context_relevance_reason']}",
    ]
    if r.get("error"):
        out.append(f"error: {r['error']}")
    # What users did about the answer (older records have no signals, searches, utilisation or citations).
    out.append(f"user signals: {', '.join(r.get('signals') or []) or 'none'}")
    if r.get("retrieval_queries"):
        out.append(f"searches {_score(r.get('search_relevance'))}/5: "
                   + "; ".join(repr(_clip(q, 60)) for q in r["retrieval_queries"])
                   + (f" ({r['search_relevance_reason']})" if r.get("search_relevance_reason") else ""))
    used = r.get("used_chunks")
    if used is not None and r["chunks"]:
        out.append(f"context used: {len(used)} of {len(r['chunks'])} chunks ({', '.join(_numbers(used)) or 'none'})")
    out += _citations(r.get("citations") or [])
    out += ["", "question:", block(r["query"]), "answer:", block(r["answer"]), "chunks:"]
    for number, chunk in enumerate(r["chunks"], start=1):
        out.append(f"  [{number}] {chunk.get('id') or ''} relevance {_score(chunk.get('relevance'))}/3")
        out.append(block(_clip(chunk["text"], 600)))
    if r["claims"]:
        out.append("claims:")
        for claim in r["claims"]:
            out.append(f"  - {claim['verdict']}: {_clip(claim['claim'], 100)}" + (f"  ({claim['reason']})" if claim.get("reason") else ""))
    return "\n".join(out)
