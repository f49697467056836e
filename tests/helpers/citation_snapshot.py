"""The citation parser's snapshot (tests/data/citation_parsing.json): a digest of what it gives for ~6,000 answers.

The compiled core's parser (native/src/citations.rs) replaced Python functions and was shown equal to them on
these answers and on hypothesis's (docs/architecture.md, Packaging); the Python went (one implementation to keep),
and this snapshot holds what the parser gave on the day parity was shown, so any change shows up in
tests/test_native_citations.py, answer by answer. After a deliberate change of the rules, rewrite it and read the
answers the test listed:

    PYTHONPATH=tests python -m helpers.citation_snapshot --write

The answers, drawn from a fixed seed with chunk ids of their own: pieces of every marker form (ranks, lists,
ranges of every dash and width, footnotes, ids differing in case and in Unicode case folding, the explicit
forms), code spans and fences, definition lines, CJK brackets and sentence ends, contents at their length caps,
answers past the marker cap, and random assigned Unicode.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

import msgspec
from helpers.text_snapshot import random_char

from ragpulse.scorers.citations import _read, count_inline, parse_citations, strip_markers

SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "citation_parsing.json"
SEED = 20261205

Ids = list[str | None]

MARKERS = [
    "[1]", "[2]", "[3]", "[12]", "[0]", "[9]", "[ 2 ]", "[1,3]", "[1, 3]", "[1-2]", "[1 - 3]", "[2–4]", "[1—2]",
    "[1~3]", "[1，2]", "[1、2]", "[1;2]", "[1；3]", "[1, 2-3]", "[3-1]", "[1-49]", "[1-50]", "[2-51]", "[1-60]",
    "[001]", "[1234]", "[1-2-3]", "[1,]", "[,1]", "[١]", "[٣-٥]", "[１]", "[𝟐]", "[^1]", "[^12]", "[^1234]",
    "[^kb-1]", "[^KB-2]", "[^note]", "[^]", "[^ 1]", "[^²]", "[kb-1]", "[KB-12]", "[Kb-1]", "[kb-99]", "[STRASSE]",
    "[straße]", "[ﬁle]", "[σς]", "[doc2]", "[doc 2]", "[doc_3]", "[doc-1]", "[document #3]", "[Document: 1]",
    "[doc kb-12]", "[doc: kb-1]", "[Doc KB-9]", "[doc below]", "[doc x²]", "[doc ①]", "[docs 1]", "[docu 1]",
    "[doc:  a b]", "[doc #x]", "[doc ##x]", "[source: 2]", "[sources: 1, 2]", "[Sources: kb-1 and kb-2]",
    "[ſource: 1]", "[SOURCES: doc1, doc2]", "[sources: brand x, 1]", "[sources: a,and,b]", "[sources: 1 AND 2]",
    "[source 3]", "[source:]", "[source: ]", "[来源：1]", "[来源: kb-1、kb-2]", "(source: kb-12)",
    "(Sources: kb-1, kb-2)", "(sources: [1], [2])", "(sources: [], [ 1 ])", "（来源：kb-1）", "( source : 1 )",
    "(SOURCE: 2)", "(source: )", "(source:x", "(source: doc 2; source: 3)", "(sources:\n1)", "(\nsource: 1)",
    "(source: a (b) c)", "(sources: document 2, doc1)", "【1】", "【2,3】", "【kb-1】", "［1］", "［kb-1］", "［1-2］",
    "[see below]", "[sic]", "[ ]", "[]", "[[1]]", "[1]]", "[[1]", "[1\n]", "[\u30001\u3000]", "[\x1c1]",
]
TEXT = [
    "Paris is the capital", "Lyon", "Nice is warm", ". ", "! ", "? ", ".", "...", "?!", "。", "！", "？", "」", "』",
    "）", "\n", "\n\n", " ", "  ", "\t", "\u3000", "“", "”", "’", "\"", "'", ")", "]", "巴黎是首都", "退货需要三十天",
    "—", "…", "---", "x", "42", "and", " and ", ",", ":", "：", "]:", "ſ", "İ", "ß", "Σ", "é", "٣", "_", "\x1f",
    "\xa0", "\u2028", "resource", "Source", "(", ")", "（", "[", "]", "【", "】", "［", "］", "^", "`", "``", "```",
    "`x[1]`", "`[2] and [3]`", "```\n[1] code\n```", "```python\nx = [1]\n", "\n[^1]: note\n", "[1]: https://x\n",
    " [^ab]: x\n", "\t[2]:y", "[^" + "a" * 64 + "]: long\n", "[" + "a" * 64 + "]: long\n", "[" + "a" * 65 + "]: long\n",
]
IDS = ["kb-1", "kb-2", "kb-12", "KB-12", "Kb-1", "", None, "doc", "strasse", "STRASSE", "ß", "ss", "file", "FILE",
       "ΣΣ", "σσ", "İd", "i̇d", "x²", "kb-1 ", "来源", "a b", "note", "1234", "b", "[1]", "a" * 128, "a" * 129]
LONG = ["[" + "a" * 128 + "]", "[" + "a" * 129 + "]", "(source: " + "b" * 248 + ")", "(source: " + "b" * 249 + ")",
        "(sources: " + "1, " * 80 + "1)"]


def _capped(rnd: random.Random) -> str:
    """An answer at or past MAX_MARKERS markers: single ranks, ranges or lists, and text after them."""
    count = rnd.choice([1, 2, 5, 200, 250, 255, 256, 257, 260, 600, 2_000])
    unit = rnd.choice(["[1]", "[2]", "[9]", "[1-50]", "[1-49]", "[1, 2]", "[1-3][kb-1]", "Paris [1-50]. ", "(source: 1, 2) "])
    return rnd.choice(["Cited ", "", "A. B "]) + unit * count + rnd.choice(["", ". Then [2].", " tail", "[1]\n[1]: x"])


def answer(rnd: random.Random) -> str:
    shape = rnd.random()
    if shape < 0.05:
        return _capped(rnd)
    if shape < 0.12:
        return "".join(random_char(rnd) for _ in range(rnd.randrange(60)))
    pieces = []
    for _ in range(rnd.randrange(1, 30)):
        roll = rnd.random()
        pool = MARKERS if roll < 0.4 else TEXT if roll < 0.9 else LONG if roll < 0.92 else None
        pieces.append(rnd.choice(pool) if pool is not None else random_char(rnd))
    return "".join(pieces)


def ids(rnd: random.Random) -> Ids:
    return [rnd.choice(IDS) for _ in range(rnd.choice([0, 1, 2, 3, 3, 5, 12]))]


def samples(count: int = 6_000, seed: int = SEED) -> list[tuple[str, Ids]]:
    rnd = random.Random(seed)
    return [(answer(rnd), ids(rnd)) for _ in range(count)]


def outputs(answer: str, chunk_ids: Ids) -> dict[str, Any]:
    """Everything the parser gives for an answer: its counts, its cited sentences, its scan and the stripped text."""
    scan = _read(answer, chunk_ids)
    parsed = parse_citations(answer, chunk_ids)
    return {
        "count": count_inline(answer, chunk_ids),
        "parse": None if parsed is None else msgspec.to_builtins(parsed),
        "scan": [scan.text, scan.placed, scan.read, scan.over_cap],
        "strip": [strip_markers(answer, chunk_ids), strip_markers(answer)],
    }


def digest(answer: str, chunk_ids: Ids) -> str:
    encoded = json.dumps(outputs(answer, chunk_ids), ensure_ascii=False, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()[:16]


def write() -> None:
    answers = samples()
    SNAPSHOT.write_text(json.dumps({"seed": SEED, "answers": len(answers),
                                    "digests": [digest(*sample) for sample in answers]}, indent=0) + "\n")
    print(f"{SNAPSHOT}: {len(answers)} answers")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: PYTHONPATH=tests python -m helpers.citation_snapshot --write")
    write()
