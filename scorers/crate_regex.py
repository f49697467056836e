"""Python `re` patterns as the compiled core's regex engine (fancy-regex) reads them, meaning what they meant.

scorers/text.py writes its patterns for Python's `re` and hands them to the crate translated: Python's \\d, \\s, \\w
and \\b on str differ from the Rust regex crate's (Python's \\w is letters, numbers and "_"; its \\s also has the
separators 0x1C-0x1F), and Python's IGNORECASE matches İ and ı for i. tests/test_crate_regex.py holds every
translated pattern to Python's matches on the texts of the analysis snapshot."""

from __future__ import annotations

import re

_WORD = r"\p{L}\p{N}_"  # Python's \w on str: letters, numbers, the underscore
_SPACE = r"\s\x1c-\x1f"  # Python's \s: White_Space and the four ASCII separators
_BOUNDARY = rf"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))"


def to_crate(pattern: str, ignorecase: bool = False) -> str:
    """`pattern` (Python `re` syntax) for fancy-regex; `ignorecase`: it was compiled with re.IGNORECASE."""
    out: list[str] = []
    class_start: int | None = None  # where the open class's body starts in `pattern`
    i = 0
    pattern = pattern.replace("(?<!^)", r"(?<=[\s\S])")
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            out.append(_escape(pattern[i + 1], class_start is not None))
            i += 2
            continue
        if char == "[" and class_start is None:
            class_start = i + 1
        elif char == "]" and class_start is not None and i > class_start + pattern.startswith("^", class_start):
            if ignorecase and _holds_i(pattern[class_start:i]):
                char = _DOTTED_DOTLESS + char
            class_start = None
        elif ignorecase and char in "iI" and class_start is None:
            char = f"[i{_DOTTED_DOTLESS}]"
        out.append(char)
        i += 1
    return ("(?i)" if ignorecase else "") + "".join(out)


# Python's re under IGNORECASE matches İ (its lower case is i) and ı (sre's _equivalences) wherever i matches;
# Unicode's simple case folding, which the crate's (?i) follows, has neither (ſ, K and the Greek pairs it has).
_DOTTED_DOTLESS = "ıİ"


def _holds_i(body: str) -> bool:
    """Whether a class (its body, a leading ^ left out) holds the letter i, as a letter or in a range."""
    return re.fullmatch(f"[{body.removeprefix('^')}]", "i", re.IGNORECASE) is not None


def _escape(escaped: str, in_class: bool) -> str:
    if escaped == "d":
        return r"\p{Nd}"
    if escaped == "s":
        return _SPACE if in_class else f"[{_SPACE}]"
    if escaped == "w":
        return _WORD if in_class else f"[{_WORD}]"
    if escaped == "b" and not in_class:
        return _BOUNDARY
    if escaped == " ":
        return " "
    return "\\" + escaped
