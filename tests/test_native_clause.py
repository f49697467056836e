"""The compiled core's clause analysis (native/src/clause.rs, patterns translated by scorers/crate_regex.py)
against the Python it replaced, kept as the oracle in tests/text_oracle.py: every field of clause() and
question_terms(), on the texts of the judge's tables (both halves) and the session table, on text made of what
the analysis decides on (numbers, units, negators, names, Chinese numerals and function characters) and on random
Unicode. Characters Python 3.11's Unicode (14.0) had not assigned are left out, as in test_native_text.py."""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

import msgspec
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ragpulse.scorers import text
from tests import text_oracle as oracle

DATA = Path(__file__).parent / "data"


def fields(parsed: Any) -> tuple[Any, ...]:
    return msgspec.structs.astuple(parsed)


def same_analysis(sample: str) -> None:
    for part in [*text.clauses(sample), sample]:
        assert fields(text.clause(part)) == fields(oracle.clause(part)), part
    assert text.question_terms(sample) == oracle.question_terms(sample), sample
    assert text.name_stems(sample) == oracle.name_stems(sample), sample


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings(item)]
    return []


def test_the_judge_and_session_tables_read_alike() -> None:
    samples = [s for name in ("judge_cases.yaml", "judge_cases_holdout.yaml", "session_turns.yaml")
               for s in strings(yaml.safe_load((DATA / name).read_text()))]
    assert len(samples) > 1_000
    for sample in samples:
        same_analysis(sample)


def _assigned(char: str) -> bool:
    return unicodedata.category(char) not in ("Cn", "Cs")


PIECES = st.one_of(
    st.sampled_from(list("0123456789٣４𝟓.,-—–~%$€£¥￥'’ \t\n\x1c\xa0\u3000_aAsSkKİıſΣ²½。！？!?；;，:()•*")),
    st.sampled_from(["not", "no", "never", "can't", "doesn’t", "and", "but", "with", "which", "Yes,", "No, ", "no you",
                     "per", "every", "once", "twice", "two", "half an", "a million", "1,500", "3 to 5 business days",
                     "9 am", "10pm", "21-year-old", "years old", "Apple", "The Store", "- ", "1) ", "$12.99", "1.5 million",
                     "not only", "no doubt", "Let me know", "不", "没有", "无法", "是的，", "三十", "天", "个月", "下午",
                     "晚上", "点", "每月", "半年", "到", "元", "星期", "礼拜", "的", "吗", "无理由", "不仅", "iPhone"]),
    st.characters(codec="utf-8").filter(_assigned),
)
SHAPED = st.lists(PIECES, max_size=30).map(" ".join) | st.lists(PIECES, max_size=30).map("".join)
ANY_TEXT = st.text(st.characters(codec="utf-8").filter(_assigned), max_size=60)


@settings(max_examples=1_500, deadline=None)
@given(SHAPED)
@example("No, you can't return it after 30 days, but 14-day exchanges cost $4.99 per month from 9 am.")
@example("是的，下午3点到5点之间每月可以退货两次，无理由退货7天，不支持半年保修。")
@example("٣٤ days or 𝟓 hours at ١٢:٠٠ pm; iPhone 15 Pro and AirPods.")
def test_the_analysis_equals_the_python_analysis_on_shaped_text(sample: str) -> None:
    same_analysis(sample)


@settings(max_examples=500, deadline=None)
@given(ANY_TEXT)
def test_the_analysis_equals_the_python_analysis_on_random_unicode(sample: str) -> None:
    same_analysis(sample)


def test_a_malformed_table_is_refused_with_its_name() -> None:
    import pytest

    from ragpulse._native import TextAnalyser

    with pytest.raises(ValueError, match="pattern en_quantity"):
        TextAnalyser({**text._CRATE_PATTERNS, "en_quantity": "(unclosed"}, {})
    with pytest.raises(ValueError, match="table stopwords missing"):
        TextAnalyser(text._CRATE_PATTERNS, {})
