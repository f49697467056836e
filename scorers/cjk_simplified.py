"""Chinese characters in their Simplified form: OpenCC's t2s, character by character, as a table the compiled core
reads while it scans (native/src/simplified.rs). The judge's analysis (scorers/text.py) and the lexical units
(scorers/lexical.py) read a Traditional text as its Simplified twin, so that "我們配送到韓國" and "我们配送到韩国"
share their terms; what is quoted of a text keeps its own characters.
"""

from __future__ import annotations

import opencc

TO_SIMPLIFIED = opencc.OpenCC("t2s")  # one converter for the process: ~3 MB (scorers/refusal_zh.py reads with it too)

# The CJK blocks the crate reads as Chinese (scorers/text.py's CJK): U+3400-4DBF, U+4E00-9FFF, U+F900-FAFF.
_BLOCKS = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF))


def _table() -> dict[str, str]:
    """Each character of the blocks that t2s converts, with its form: one string of the characters a line each, so
    that no phrase of t2s's dictionary spans two (6 ms for the 28,096). A form outside the blocks (a rare character
    whose Simplified form is in extension B) is left out: it would end a CJK run."""
    chars = [chr(code) for first, last in _BLOCKS for code in range(first, last + 1)]
    converted = TO_SIMPLIFIED.convert("\n".join(chars)).split("\n")
    if len(converted) != len(chars):
        raise RuntimeError("OpenCC t2s converted a line into more than one")
    return {char: form for char, form in zip(chars, converted, strict=True)
            if form != char and len(form) == 1 and any(first <= ord(form) <= last for first, last in _BLOCKS)}


SIMPLIFIED: dict[str, str] = _table()  # 3,417 characters in OpenCC 1.1's t2s
