"""Python `re` patterns as the compiled core's regex engine (fancy-regex) reads them, meaning what they meant.

scorers/text.py writes its patterns for Python's `re` and hands them to the crate translated: Python's \\d, \\s, \\w
and \\b on str differ from the Rust regex crate's (Python's \\w is letters, numbers and "_"; its \\s also has the
separators 0x1C-0x1F), and Python's IGNORECASE matches İ and ı for i. tests/test_crate_regex.py holds every
translated pattern to Python's matches on the texts of the analysis snapshot.

A \\b is a lookaround in the crate, and a lookaround sends a pattern to fancy-regex's backtracking VM (the crate
starts it only where the pattern less its lookarounds can match: native/src/clause/bindings.rs): the less it checks
there, the faster the clause. So a \\b whose neighbour in the pattern can only be a word character (\\bno) or only
not one (yes\\b[,.]) checks the other side alone, or nothing, and one just before a literal character or a class
checks after consuming it (n(?<![...]n)): the VM fails on the character first. tests/test_crate_regex.py holds random
patterns around \\b to Python's matches on text where the two engines' word characters part."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_WORD = r"\p{L}\p{N}_"  # Python's \w on str: letters, numbers, the underscore
_SPACE = r"\s\x1c-\x1f"  # Python's \s: White_Space and the four ASCII separators
# The crate's (?i) would close the class under case folding (U+0345, a mark, folds to ι); Python's \w and \b ignore
# case.
_W = f"(?-i:[{_WORD}])"
_BOUNDARY = f"(?:(?<={_W})(?!{_W})|(?<!{_W})(?={_W}))"

# What may stand on one side of a position: True a word character, False another character or the text's edge.
_Side = frozenset[bool]
_ANY: _Side = frozenset((True, False))
_NOTHING: _Side = frozenset()
_WORD_SIDE: _Side = frozenset((True,))
_OTHER_SIDE: _Side = frozenset((False,))


def to_crate(pattern: str, ignorecase: bool = False) -> str:
    """`pattern` (Python `re` syntax) for fancy-regex; `ignorecase`: it was compiled with re.IGNORECASE."""
    pattern = pattern.replace("(?<!^)", r"(?<=[\s\S])")
    sides = _Parser(pattern, ignorecase).boundary_sides()
    out: list[str] = []
    class_start: int | None = None  # where the open class's body starts in `pattern`
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and pattern[i + 1] == "b" and class_start is None:
            emitted, i = _boundary(pattern, i, sides[i], ignorecase)
            out.append(emitted)
            continue
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


def _boundary(pattern: str, at: int, sides: tuple[_Side, _Side], ignorecase: bool) -> tuple[str, int]:
    """The \\b at `at` as the crate checks it, and where the pattern goes on. `sides`: what may stand before and after
    it. Where only one side is open, one lookaround; where the other side is a single character or class
    (unquantified), checked after it: the VM fails on the character first."""
    before, after = sides
    end = at + 2
    if len(before) == 1 and len(after) == 1:
        return ("" if before != after else "(?!)"), end
    if before == {True}:
        return f"(?!{_W})", end
    if before == {False}:
        return f"(?={_W})", end
    if after == {True}:
        atom_end = _atom_end(pattern, end)
        if atom_end is not None:
            atom = to_crate(pattern[end:atom_end], ignorecase).removeprefix("(?i)")
            return f"{atom}(?<!{_W}{atom})", atom_end
        return f"(?<!{_W})", end
    if after == {False}:
        return f"(?<={_W})", end
    return _BOUNDARY, end


def _atom_end(pattern: str, start: int) -> int | None:
    """The end of the single character or class at `start` if no quantifier follows it, else None."""
    if start >= len(pattern) or pattern[start] in "()|.^$*+?{":
        return None
    if pattern[start] == "[":
        end = _class_end(pattern, start)
    elif pattern[start] == "\\":
        if pattern[start + 1] not in "dsw" and pattern[start + 1].isalnum():
            return None  # \x41, \u…, \N{…}, a back reference: left where they are
        end = start + 2
    else:
        end = start + 1
    return end if end >= len(pattern) or pattern[end] not in "*+?{" else None


def _class_end(pattern: str, start: int) -> int:
    """The index after the class that opens at `start` (Python's rules: a "]" first in it, or after "^", is literal)."""
    i = start + 1 + pattern.startswith("^", start + 1)
    i += pattern.startswith("]", i)
    while pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i + 1


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
        return _WORD if in_class else _W
    if escaped == " ":
        return " "
    return "\\" + escaped


# -- where each \b stands: what the pattern can put on either side of it ------------------------------------------


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


@dataclass
class _Shape:
    """What a piece of pattern can consume first and last, and whether it can consume nothing."""

    first: _Side
    last: _Side
    empty: bool


@dataclass
class _Node:
    kind: str  # "char" (one character), "cat", "alt", "repeat", "ahead", "behind", "zero" (an anchor), "b"
    shape: _Shape
    children: list[_Node] = field(default_factory=list)
    at: int = 0  # a \b's index in the pattern
    repeats: bool = False  # a "repeat" that can run more than once


_ZERO = _Shape(_NOTHING, _NOTHING, True)
_QUANTIFIER = re.compile(r"(?:([*+?])|\{(\d*)(,?)(\d*)\})[?+]?")
_GROUP = re.compile(r"\((\?(?::|P<\w+>|=|!|<=|<!))?")  # capturing, named, non-capturing, the four lookarounds
_ESCAPE_SIDES = {"d": _WORD_SIDE, "w": _WORD_SIDE, "s": _OTHER_SIDE, **dict.fromkeys("afnrtv", _OTHER_SIDE)}


class _Parser:
    """Python `re` syntax, as far as its first and last characters go: enough to tell, for each \\b, whether the
    pattern puts a word character, another character or either on each side. What it does not know it reads as
    either (a character of an unknown kind), which keeps the two-sided check."""

    def __init__(self, pattern: str, ignorecase: bool) -> None:
        self.pattern, self.ignorecase, self.i = pattern, ignorecase, 0

    def boundary_sides(self) -> dict[int, tuple[_Side, _Side]]:
        tree = self._alternation()
        if self.i != len(self.pattern):
            raise ValueError(f"unbalanced ) at {self.i} in {self.pattern!r}")
        sides: dict[int, tuple[_Side, _Side]] = {}
        _visit(tree, _ANY, _ANY, sides)
        return sides

    def _alternation(self) -> _Node:
        branches = [self._concatenation()]
        while self.pattern.startswith("|", self.i):
            self.i += 1
            branches.append(self._concatenation())
        if len(branches) == 1:
            return branches[0]
        shapes = [branch.shape for branch in branches]
        return _Node("alt", _Shape(frozenset().union(*(s.first for s in shapes)),
                                   frozenset().union(*(s.last for s in shapes)), any(s.empty for s in shapes)),
                     branches)

    def _concatenation(self) -> _Node:
        items: list[_Node] = []
        while self.i < len(self.pattern) and self.pattern[self.i] not in "|)":
            items.append(self._quantified(self._atom()))
        first, last = _NOTHING, _NOTHING
        for item in items:  # the first characters: up to the first item that cannot be empty
            first |= item.shape.first
            if not item.shape.empty:
                break
        for item in reversed(items):
            last |= item.shape.last
            if not item.shape.empty:
                break
        return _Node("cat", _Shape(first, last, all(item.shape.empty for item in items)), items)

    def _quantified(self, atom: _Node) -> _Node:
        match = _QUANTIFIER.match(self.pattern, self.i)
        if match is None:
            return atom
        self.i = match.end()
        sign, low, comma, high = match.groups()
        least = {"*": 0, "+": 1, "?": 0}[sign] if sign else int(low or 0)
        repeats = sign in ("*", "+") or (not sign and (comma and high != "1" or (not comma and int(low or 0) > 1)))
        shape = _Shape(atom.shape.first, atom.shape.last, atom.shape.empty or least == 0)
        return _Node("repeat", shape, [atom], repeats=bool(repeats))

    def _atom(self) -> _Node:
        pattern, start = self.pattern, self.i
        char = pattern[start]
        if char == "(":
            return self._group()
        if char == "[":
            self.i = _class_end(pattern, start)
            return self._char(_class_sides(pattern[start:self.i], self.ignorecase))
        if char == "\\":
            return self._escaped()
        self.i += 1
        if char in "^$":
            return _Node("zero", _ZERO)
        return self._char(_ANY if char == "." else _char_sides(char, self.ignorecase))

    def _escaped(self) -> _Node:
        escaped = self.pattern[self.i + 1]
        self.i += 2
        if escaped == "b":
            return _Node("b", _ZERO, at=self.i - 2)
        if escaped == "A":
            return _Node("zero", _ZERO)
        if escaped.isalnum() and escaped not in _ESCAPE_SIDES:
            raise ValueError(f"\\{escaped} is not translated (in {self.pattern!r})")  # \B, \S, \x41, \1 …
        return self._char(_ESCAPE_SIDES.get(escaped) or _char_sides(escaped, self.ignorecase))

    def _group(self) -> _Node:
        header = _GROUP.match(self.pattern, self.i)
        assert header is not None
        if self.pattern.startswith("(?", self.i) and header.group(1) is None:
            raise ValueError(f"group at {self.i} is not translated (in {self.pattern!r})")
        self.i = header.end()
        inner = self._alternation()
        if not self.pattern.startswith(")", self.i):
            raise ValueError(f"missing ) in {self.pattern!r}")
        self.i += 1
        kind = {"(?=": "ahead", "(?!": "ahead", "(?<=": "behind", "(?<!": "behind"}.get(header.group(0), "")
        if kind:
            return _Node(kind, _ZERO, [inner])
        return inner

    @staticmethod
    def _char(sides: _Side) -> _Node:
        return _Node("char", _Shape(sides, sides, False))


def _char_sides(char: str, ignorecase: bool) -> _Side:
    """What a literal character may match: under IGNORECASE a cased non-ASCII character may match characters of
    other kinds (Python matches the mark U+0345 for ι), so either; an ASCII one matches letters only (İ ı ſ K)."""
    if ignorecase and not char.isascii() and not char.lower() == char == char.upper():
        return _ANY
    return frozenset((_is_word(char),))


def _range_sides(chars: str, ignorecase: bool) -> _Side:
    """What a range's characters may match (a CJK range is 20,000 of them: read by `re`, not one by one)."""
    if ignorecase and not chars.isascii() and not chars.lower() == chars == chars.upper():
        return _ANY
    return frozenset(side for side, kind in ((True, r"\w"), (False, r"\W")) if re.search(kind, chars))


def _class_sides(text: str, ignorecase: bool) -> _Side:
    """What a class `[...]` may match; a negated class, either."""
    body = text[1:-1]
    if body.startswith("^"):
        return _ANY
    sides: set[bool] = set()
    i = 0
    while i < len(body):
        if body[i] == "\\":
            escaped = body[i + 1]
            if escaped in "dw":
                sides.add(True)
            elif escaped == "s":
                sides.add(False)
            elif escaped.isalnum():
                return _ANY  # \S, \W, \D, \x41 …: not worth reading
            else:
                sides |= _char_sides(escaped, ignorecase)
            i += 2
        elif i + 2 < len(body) and body[i + 1] == "-" and body[i + 2] != "\\":
            sides |= _range_sides("".join(map(chr, range(ord(body[i]), ord(body[i + 2]) + 1))), ignorecase)
            i += 3
        else:
            sides |= _char_sides(body[i], ignorecase)
            i += 1
    return frozenset(sides)


def _visit(node: _Node, before: _Side, after: _Side, sides: dict[int, tuple[_Side, _Side]]) -> None:
    """Records for each \\b under `node` what may stand before and after it; `before` and `after`: what may stand
    on either side of `node` in the pattern around it."""
    if node.kind == "b":
        sides[node.at] = (before, after)
    elif node.kind == "alt":
        for child in node.children:
            _visit(child, before, after, sides)
    elif node.kind == "ahead":  # it reads from here on: what stands before is the position's
        _visit(node.children[0], before, _ANY, sides)
    elif node.kind == "behind":  # it reads up to here
        _visit(node.children[0], _ANY, after, sides)
    elif node.kind == "repeat":
        child = node.children[0]
        _visit(child, before | child.shape.last if node.repeats else before,
               after | child.shape.first if node.repeats else after, sides)
    elif node.kind == "cat":
        afters, following = [], after
        for item in reversed(node.children):
            afters.append(following)
            following = item.shape.first | following if item.shape.empty else item.shape.first
        preceding = before
        for item, item_after in zip(node.children, reversed(afters)):
            _visit(item, preceding, item_after, sides)
            preceding = item.shape.last | preceding if item.shape.empty else item.shape.last
