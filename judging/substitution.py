"""The local judge's swap rule (judging/local_judge.py): a claim that copies the clause it aligns with but for one thing,
which the context says elsewhere and never in the same sentence (the Munich store's hours given as the Berlin
store's, 上海门店 for 北京门店), is contradicted. A rewording is no swap: function words, an abbreviation ("EU" for
"European Union") and another form of the same word ("worsen" for "worse") name the same thing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from difflib import SequenceMatcher

from ragpulse._native import stem_words
from ragpulse.scorers.text import Clause

SWAP_MAX_TOKENS = 3  # words (or characters) replaced at most, for a substitution


def _spell(tokens: Sequence[str]) -> str:
    return "".join(tokens) if all(len(t) == 1 and t > "\u33ff" for t in tokens) else " ".join(tokens)


def substitution(claim: Clause, aligned: Clause, statements: Callable[[], Sequence[tuple[Clause, ...]]],
                 beside: Callable[[], tuple[Sequence[str], Sequence[str]]]) -> tuple[str, str] | None:
    """The aligned clause word for word but for one span replaced by words the context says in another
    statement, never in the same one: the Munich store's hours given as the Berlin store's, 上海门店
    for 北京门店, standard shipping's price given as express shipping's. `statements` gives the chunks'
    sentences as their clauses, `beside` the sequences of the clauses just before and after the aligned one in
    its chunk (both made only when the rest holds)."""
    if not one_span_apart(claim.sequence, aligned.sequence):
        return None
    changes = [op for op in SequenceMatcher(None, claim.sequence, aligned.sequence, autojunk=False).get_opcodes()
               if op[0] != "equal"]
    if len(changes) != 1 or changes[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = changes[0]
    # one thing for another is a span of about the same length ("use" for "tracking: every shipped
    # order has" is a rewording)
    if max(i2 - i1, j2 - j1) > SWAP_MAX_TOKENS or abs((i2 - i1) - (j2 - j1)) > 1 or len(claim.sequence) - (i2 - i1) < 2:
        return None
    moved, replaced = _spell(claim.sequence[i1:i2]), _spell(aligned.sequence[j1:j2])
    if len(moved) < 2 or len(replaced) < 2:  # one character (内 for 支持) is no thing of its own
        return None
    if _same_thing(claim.sequence[i1:i2], aligned.sequence[j1:j2]) or _left_out(claim.sequence[i1:i2], aligned, j1, j2,
                                                                                 beside):
        return None
    sentences = statements()
    said = [any(_says(c, moved) for c in statement) for statement in sentences]
    together = any(any(_says(c, replaced) for c in statement) for statement, has in zip(sentences, said) if has)
    return (moved, replaced) if any(said) and not together else None


# Words that join or place things, no thing of their own: "although" for "while" is a rewording.
_FUNCTION_STEMS = frozenset(stem_words(
    "although though while whilst whereas because since until unless however therefore thus hence yet whether upon "
    "among amongst between through throughout during without against toward towards across along around via despite "
    "besides meanwhile moreover furthermore nevertheless nonetheless instead otherwise even later earlier again".split()))


def _same_thing(moved: Sequence[str], replaced: Sequence[str]) -> bool:
    """Two spans that name one thing: function words on either side, an abbreviation of the other's words ("EU" for
    "European Union"), or stems of one word ("worsen" for "wors", of "worse")."""
    if all(t in _FUNCTION_STEMS for t in moved) or all(t in _FUNCTION_STEMS for t in replaced):
        return True
    short, long_ = sorted((moved, replaced), key=len)
    if len(short) == 1 and len(long_) > 1 and short[0] == "".join(t[0] for t in long_):
        return True
    if len(moved) == len(replaced) == 1 and min(len(moved[0]), len(replaced[0])) >= 3:
        return moved[0].startswith(replaced[0]) or replaced[0].startswith(moved[0])
    return False


def _left_out(moved: Sequence[str], aligned: Clause, j1: int, j2: int,
              beside: Callable[[], tuple[Sequence[str], Sequence[str]]]) -> bool:
    """Whether the moved span is the context's own words right beside the replaced one, in the clause before or after
    the aligned clause: the claim leaves words out, two things trade no places ("ireland (; ; ulster-scots: ) is an
    island", cut at its semicolons, read "ireland is an island" as Ireland put where the context says Ulster-Scots)."""
    if j1 > 0 and j2 < len(aligned.sequence):
        return False
    before, after = beside()
    return ((j1 == 0 and tuple(before[len(before) - len(moved):]) == tuple(moved))
            or (j2 == len(aligned.sequence) and tuple(after[:len(moved)]) == tuple(moved)))


def one_span_apart(claim: Sequence[str], aligned: Sequence[str]) -> bool:
    """Whether the two can be one replaced span of at most SWAP_MAX_TOKENS apart: what they share around the
    span is a common start and a common end, so the longest common start and end must leave no more than that of
    either. A necessary condition only, checked before the matcher (which it spares most clauses)."""
    shortest = min(len(claim), len(aligned))
    start = next((i for i in range(shortest) if claim[i] != aligned[i]), shortest)
    end = next((i for i in range(shortest) if claim[-1 - i] != aligned[-1 - i]), shortest)
    return max(len(claim), len(aligned)) - start - end <= SWAP_MAX_TOKENS


def _says(parsed: Clause, spelled: str) -> bool:
    """Whether a clause has these words (English stems) or these characters in a row (CJK)."""
    if " " in spelled or spelled in parsed.words:
        return all(word in parsed.words for word in spelled.split(" "))
    return spelled in "".join(parsed.cjk_parts)
