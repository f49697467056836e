"""Python `re` patterns as the compiled core's regex engine (fancy-regex) reads them, meaning what they meant.

scorers/text.py writes its patterns for Python's `re` and hands them to the crate translated: Python's \\d, \\s, \\w
and \\b on str differ from the Rust regex crate's (Python's \\w is letters, numbers and "_"; its \\s also has the
separators 0x1C-0x1F), and Python's IGNORECASE equates i and ı. tests/test_native_clause.py holds the result to
the Python analysis on the judge's tables and random Unicode."""

from __future__ import annotations

_WORD = r"\p{L}\p{N}_"  # Python's \w on str: letters, numbers, the underscore
_SPACE = r"\s\x1c-\x1f"  # Python's \s: White_Space and the four ASCII separators
_BOUNDARY = rf"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))"


def to_crate(pattern: str, ignorecase: bool = False) -> str:
    """`pattern` (Python `re` syntax) for fancy-regex; `ignorecase`: it was compiled with re.IGNORECASE."""
    out: list[str] = []
    in_class = False
    i = 0
    pattern = pattern.replace("(?<!^)", r"(?<=[\s\S])")
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            escaped = pattern[i + 1]
            i += 2
            if escaped == "d":
                out.append(r"\p{Nd}")
            elif escaped == "s":
                out.append(_SPACE if in_class else f"[{_SPACE}]")
            elif escaped == "w":
                out.append(_WORD if in_class else f"[{_WORD}]")
            elif escaped == "b" and not in_class:
                out.append(_BOUNDARY)
            elif escaped == " ":
                out.append(" ")
            else:
                out.append("\\" + escaped)
            continue
        if char == "[" and not in_class:
            in_class = True
        elif char == "]" and in_class:
            in_class = False
        elif ignorecase and char == "i" and not in_class:
            char = "[iı]"  # Python's re equates i and ı under IGNORECASE (sre's _equivalences)
        out.append(char)
        i += 1
    return ("(?i)" if ignorecase else "") + "".join(out)
