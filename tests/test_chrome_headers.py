"""scorers/chrome.py's one pattern of buttons and bracketed headers, built for a whole line (blanked in every answer)
and for a clause (read around a refusal): each matches what its own pattern matched before they were one (c. *-q31*'s
reading), on generated bracket, header and log lines."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragpulse.scorers import chrome

pytestmark = pytest.mark.unit  # starts no process and binds no port (pyproject.toml)

# The two patterns as they were written apart
_LINE_BEFORE = re.compile(r"^[^\S\n]*(?:(?:\[[^\]\n]*[^\W\d_][^\]\n]*\][^\S\n]*){1,4}(?:[^\w\n]*[A-Za-z0-9-]{1,20}){0,2}"
                          r"[^\w\n]*|\[(?:agent|tool|system|bot|log|debug|trace|retriever)\][^\n]*|```\w*|"
                          r">[^\S\n]*_[^_\n]{1,120}_)[^\S\n]*$", re.MULTILINE | re.IGNORECASE)
_CLAUSE_BEFORE = re.compile(r"^\W*(?:[\[【][^\]】\n]{1,40}[\]】]\W*){1,4}(?:[A-Za-z0-9-]{1,20}\W*){0,2}$|"
                            r"^\W*\[(?:agent|tool|system|bot|log|debug|trace|retriever)\]", re.IGNORECASE)
_CLAUSE_NOW = re.compile(rf"^\W*{chrome._bracket_headers(whole_line=False)}$|^\W*{chrome._LOG_TAG}", re.IGNORECASE)

# Pieces of headers, buttons, log lines and what stands around them: brackets of both kinds, letters, digits, spaces,
# punctuation, an emoji, a line's end, a log's tag, a name longer than a header's (20) and contents longer than 40
_PIECES = st.sampled_from(["[", "]", "【", "】", "a", "Z", "é", "门", "7", " ", "  ", "\t", "\n", "-", "|", "·", ":", "_",
                           ",", "🤖", ">", "`", "```", "[agent]", "[Tool]", "[ Back ]", "[1]", "[WhatsApp 09:14]",
                           "Helpdesk", "Call-us", "x" * 21, "[" + "y" * 41 + "]", "【门店自助机 SH-05】"])
_TEXTS = st.lists(_PIECES, max_size=14).map("".join)


@settings(max_examples=1000, deadline=None)
@given(_TEXTS)
def test_the_line_and_the_clause_headers_match_as_before(text: str) -> None:
    assert chrome._CHROME_LINE.sub("#", text) == _LINE_BEFORE.sub("#", text)
    assert (_CLAUSE_NOW.search(text) is None) == (_CLAUSE_BEFORE.search(text) is None)


@pytest.mark.parametrize(("text", "line", "clause"), [
    ("[ Call a colleague ]  [ Back ]", True, True),
    ("[WhatsApp 09:14] 🤖 Helpdesk", True, True),
    ("【门店自助机 SH-05】", False, True),  # a Chinese headline on a line of its own stays
    ("[1] [2]", False, True),  # citations: no letter inside
    ("[Yes] | [No, thanks] | [Back to the main menu]", False, True),  # only spaces between a line's brackets
    ("[agent] match=false score=0.41", True, True),
])
def test_a_line_takes_less_than_a_clause(text: str, line: bool, clause: bool) -> None:
    assert (chrome._CHROME_LINE.search(text) is not None, _CLAUSE_NOW.search(text) is not None) == (line, clause)
