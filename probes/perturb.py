"""Perturbed variants of a golden question, for the robustness check: a retrieval that finds the
chunk for "How long is the warranty?" but not for "how long is the warrnaty" or "How long is the
warranty？" is fragile. Each kind gives at most one variant, the same every run (no randomness):

- typo: two adjacent letters of the longest word swapped (Latin script only);
- word_order: two adjacent words swapped after the first (English), or two clauses (Chinese, at `，`);
- punctuation: Chinese and English punctuation exchanged (？ for ?, ， for ,), a final mark dropped;
- case: all lower case (Latin script only).

A kind that does not apply to a question (no Latin word for a typo) gives no variant. Synonyms are
not among them: they need a thesaurus per language and domain, which ragpulse does not ship.
"""

from __future__ import annotations

import re

KINDS = ("typo", "word_order", "punctuation", "case")
_LATIN_WORD = re.compile(r"[A-Za-z]{4,}")
_TO_CHINESE = str.maketrans({"?": "？", ",": "，", ".": "。", "!": "！", ":": "：", ";": "；"})
_TO_ENGLISH = str.maketrans({"？": "?", "，": ",", "。": ".", "！": "!", "：": ":", "；": ";"})


def variant(query: str, kind: str) -> str | None:
    if kind == "typo":
        words = _LATIN_WORD.findall(query)
        if not words:
            return None
        longest = max(words, key=len)
        middle = len(longest) // 2
        swapped = longest[:middle - 1] + longest[middle] + longest[middle - 1] + longest[middle + 1:]
        return query.replace(longest, swapped, 1) if swapped != longest else None
    if kind == "word_order":
        if "，" in query:
            first, _, rest = query.partition("，")
            tail = rest.rstrip("？?。.")
            return f"{tail}，{first}{rest[len(tail):]}" if tail else None
        words = query.split(" ")
        if len(words) < 4:
            return None
        words[1], words[2] = words[2], words[1]
        return " ".join(words)
    if kind == "punctuation":
        exchanged = query.translate(_TO_ENGLISH) if re.search(r"[？，。！：；]", query) else query.translate(_TO_CHINESE)
        exchanged = exchanged.rstrip("?？.。!！")
        return exchanged if exchanged and exchanged != query else None
    if kind == "case":
        lowered = query.lower()
        return lowered if lowered != query else None
    raise ValueError(f"unknown perturbation {kind!r} (known: {', '.join(KINDS)})")
