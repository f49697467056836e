"""The text analysis's snapshot (tests/data/text_analysis.json): a digest of every analysis of ~4,000 texts.

The compiled core's text analysis (native/src/lexical.rs, clause.rs) replaced Python functions and was shown equal
to them, kept as an oracle until then (docs/architecture.md, Packaging: the tables, 387,835 + 40,000 generated texts, and these
texts). The oracle is gone (one implementation to keep); this snapshot holds what the analysis gave on the day
parity was shown, so any change of it shows up in tests/test_native_text.py, text by text.

After a deliberate change of the rules or tables, rewrite it and read the texts the test listed:

    PYTHONPATH=tests python -m helpers.text_snapshot --write

The texts: every string of the judge's tables (both halves) and the session table, the lexical scorer's table,
2,500 texts made of what the analysis decides on (numbers of several scripts, units, negators, names, Chinese
numerals and function characters, Python's whitespace) and 500 of random assigned Unicode, drawn from a fixed seed.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import unicodedata
from pathlib import Path
from functools import cache
from typing import Any

import msgspec
import yaml
from helpers.lexical_chunks import EN, ZH  # the lexical scorer's table of chunks

from ragpulse.scorers import lexical, text

DATA = Path(__file__).resolve().parents[1] / "data"
SNAPSHOT = DATA / "text_analysis.json"
SEED = 20261203

# What the scanning decides on: a token, a number, a unit, a boundary, a negation, a name, a numeral.
PIECES = [
    *"0123456789٣٤੫๗１２𝟓.,-—–~%$€£¥￥'’ \t\n\x1c\x1f\xa0\u3000_aAsSkKİıſΣσ²½。！？!?；;，:()•*",
    "not", "no", "never", "can't", "doesn’t", "and", "but", "with", "which", "Yes,", "No, ", "no you", "per", "every",
    "once", "twice", "two", "half an", "a million", "1,500", "3 to 5 business days", "9 am", "10pm", "21-year-old",
    "years old", "Apple", "The Store", "- ", "1) ", "$12.99", "1.5 million", "not only", "no doubt", "Let me know", "不",
    "没有", "无法", "是的，", "三十", "天", "个月", "下午", "晚上", "点", "每月", "半年", "到", "元", "星期", "礼拜", "的",
    "吗", "无理由", "不仅", "iPhone", "years", "returns", "days-", "seven-day", "15x", "5 daysx", "一百二十", "九十九",
    "零", "两", "百", "千", "保修期", "退货", "delivered", "university", "refunds", "shipping",
    *lexical._NUMBER_WORDS, *lexical._UNITS, *sorted(lexical._STOPWORDS)[:20],
]


def assigned(char: str) -> bool:
    return unicodedata.category(char) not in ("Cn", "Cs")


def random_char(rnd: random.Random) -> str:
    while not assigned(char := chr(rnd.randrange(0x110000))):
        pass
    return char


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    return []


def samples() -> list[str]:
    tables = [s for name in ("judge_cases.yaml", "judge_cases_holdout.yaml", "session_turns.yaml")
              for s in _strings(yaml.safe_load((DATA / name).read_text()))]
    rnd = random.Random(SEED)
    shaped = []
    for _ in range(2_500):
        pieces = [rnd.choice(PIECES) if rnd.random() < 0.9 else random_char(rnd) for _ in range(rnd.randrange(41))]
        shaped.append((" " if rnd.random() < 0.5 else "").join(pieces))
    noise = ["".join(random_char(rnd) for _ in range(rnd.randrange(81))) for _ in range(500)]
    return tables + EN + ZH + shaped + noise + ["九百" * 1112 + "天"]  # past a million: Python's "%g"


def _plain(value: Any) -> Any:
    """Sets sorted (by repr: a NaN sorts nowhere), tuples as lists: one encoding whatever the hash seed."""
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(item) for item in value), key=repr)
    if isinstance(value, (tuple, list)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, float):
        return repr(value)
    return value


@cache
def _knowledge() -> text.Clause:
    """The judge table's Chinese knowledge base as one clause: what a claim's CJK characters are covered against."""
    table = yaml.safe_load((DATA / "judge_cases.yaml").read_text())["knowledge_base"]
    return text.clause("".join(value for key, value in table.items() if key.startswith("zh-")))


def analysis(sample: str) -> dict[str, Any]:
    """Everything the crate's analysis gives for a text: its clauses' analyses (and its own as one clause), how
    much of each clause's CJK characters the whole text and the Chinese knowledge base cover, its question terms,
    its name stems and the lexical scorer's units."""
    parsed = [text.clause(part) for part in [*text.clauses(sample), sample]]
    knowledge, units = _knowledge(), lexical.units(sample)
    return _plain({
        "clauses": [msgspec.structs.astuple(part) for part in parsed],
        "covered": [(text.cjk_covered(part.cjk_parts, parsed[-1].terms, parsed[-1].chars),
                     text.cjk_covered(part.cjk_parts, knowledge.terms, knowledge.chars)) for part in parsed],
        "question_terms": text.question_terms(sample),
        "name_stems": text.name_stems(sample),
        "units": (units.words, units.numbers, units.values),
    })


def digest(sample: str) -> str:
    encoded = json.dumps(analysis(sample), ensure_ascii=False, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()[:16]


def write() -> None:
    texts = samples()
    SNAPSHOT.write_text(json.dumps({"seed": SEED, "texts": len(texts), "digests": [digest(s) for s in texts]}, indent=0) + "\n")
    print(f"{SNAPSHOT}: {len(texts)} texts")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: PYTHONPATH=tests python -m helpers.text_snapshot --write")
    write()
