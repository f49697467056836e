"""A learned reading of whether a clause of an answer claims nothing about the domain (a decline, a deferral, a
hand-off, a channel's chrome, a pleasantry) rather than making a factual claim, and the local judge's gate on it: an
answer that says it cannot answer, in words no hand reading lists, is a refusal (issue 44).

Logistic regression over hashed features of the clause: its lower-cased characters' 1- to 4-grams (Chinese has no
spaces: its characters' n-grams are its words), its ASCII words and word pairs, and a few shape features (a digit,
CJK, its length). Fitted by bench/train_claims_nothing.py on the refusal sets' development answers
(tests/data/refusals_dev.jsonl: every clause of a refusal claims nothing; each partial refusal holds at least one
claim) and on claims (the sets' knowledge base, public benchmarks' development answers); shipped as package data
(judging/model/claims_nothing.v1.json: its version, threshold and half-precision weights). Pure Python (zlib's CRC-32
hashes the features): no dependency beyond the standard library.
"""

from __future__ import annotations

import base64
import functools
import json
import math
import re
import struct
import zlib
from array import array
from collections.abc import Sequence
from importlib import resources

from ragpulse.scorers.declines import ZH_KNOWING, ZH_SPEAKER, letter_runs
from ragpulse.scorers.refusal_gate import ANCHORS, answer_may_refuse, may_refuse

MODEL_FILE = "model/claims_nothing.v1.json"
# 65,536 hashed features: 2^18 recognised 4 more of 3,603 refusals left out, at four times the file and its memory
# (docs/benchmarks-log.md, the learned gate's section)
BITS = 16
MAX_CHARS = 300  # of a clause: a refusal's clause is shorter
_WORD = re.compile(r"[a-z0-9']+")
_CJK = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]")
_DIGIT = re.compile(r"\d")
# the shape features, past the hashed ones: a bias, a digit, CJK, and the length in characters by bucket
_BIAS, _HAS_DIGIT, _HAS_CJK, _LENGTH = range(4)
_LENGTHS = (12, 30, 60, 120)
SHAPES = _LENGTH + len(_LENGTHS) + 1
# An answer of this many claims at most is read by the gate: a refusal is a few clauses
MAX_CLAIMS = 4
# A negation and what the clause says without it. A refusal's negation is of the speaker's knowing, finding or
# answering: without it the clause still speaks of those ("I can't find that in my notes" -> "I can find that in my
# notes"), and reads as claiming nothing again. A claim's negation is of a fact ("There is no student discount",
# 礼品卡不能兑换现金): without it, the clause is the fact's plain statement, a claim.
_EN_NEGATIONS = tuple((re.compile(pattern, re.IGNORECASE), plain) for pattern, plain in (
    (r"\bcannot\b", "can"), (r"\bcan['’]t\b", "can"), (r"\bwon['’]t\b", "will"), (r"n['’]t\b", ""),
    (r"\b(?:not|never)\s+(?=\w)", ""), (r"\bno\s+(?=\w)", "a "), (r"\bnothing\b", "something"), (r"\bnone\b", "some"),
    (r"\bnobody\b", "somebody"), (r"\b(?:i\s+)?wish\s+(?:that\s+)?", "")))  # "I wish I could help": it cannot
# A negation is of the speaker's knowing when the clause names whose knowing or what it is about: in English the rules'
# anchors (scorers/refusal_gate.py: the speaker, the sources, the question, a verb of saying) but where ("There is no
# student discount": an existential of the domain), in Chinese the speaker or a word of knowing or of the sources
# (scorers/declines.py: 没有关于汞的规定 names neither)
_WHOSE = ANCHORS - {"there", "here"}
_ZH_WHOSE = re.compile(f"{ZH_SPEAKER}|{ZH_KNOWING}")
_ZH_NEGATIONS = ((re.compile("无法|不能|不可以|没法|没办法"), "能"), (re.compile("没有|无"), "有"), (re.compile("[不没未]"), ""))


def _grams(padded: str, dim: int) -> list[int]:
    """The hashed 1- to 4-grams of a text's characters, each length with a CRC of its own (its seed)."""
    encoded = [char.encode() for char in padded]
    found = []
    for n in range(1, 5):
        found += [zlib.crc32(b"".join(encoded[start:start + n]), n) % dim for start in range(len(encoded) - n + 1)]
    return found


def indices(text: str, bits: int = BITS) -> list[int]:
    """The clause's features, each as often as it occurs (" text ": the spaces mark its ends): 2^bits hashed ones,
    then SHAPES."""
    dim, lower = 1 << bits, text[:MAX_CHARS].lower()
    words = _WORD.findall(lower)
    hashed = _grams(f" {lower} ", dim)
    hashed += [zlib.crc32(f"w {word}".encode()) % dim for word in words]
    hashed += [zlib.crc32(f"b {first} {second}".encode()) % dim for first, second in zip(words, words[1:])]
    hashed += [dim + _BIAS, dim + _LENGTH + sum(len(lower) > edge for edge in _LENGTHS)]
    if _DIGIT.search(lower):
        hashed.append(dim + _HAS_DIGIT)
    if _CJK.search(lower):
        hashed.append(dim + _HAS_CJK)
    return hashed


def affirmed(text: str) -> str:
    """The clause without its negations (itself when it has none)."""
    for pattern, replacement in _ZH_NEGATIONS if _CJK.search(text) else _EN_NEGATIONS:
        text = pattern.sub(replacement, text)
    return text


def _of_knowing(text: str) -> bool:
    if _CJK.search(text):
        return _ZH_WHOSE.search(text) is not None
    return not _WHOSE.isdisjoint(letter_runs(text.lower()))


class ClaimsNothing:
    """The fitted weights (2^bits hashed features' and SHAPES') and the probability at or above which a clause claims
    nothing."""

    def __init__(self, weights: Sequence[float], threshold: float, version: str) -> None:
        self.bits = (len(weights) - SHAPES).bit_length() - 1
        if len(weights) != (1 << self.bits) + SHAPES:
            raise ValueError(f"claims_nothing {version}: {len(weights)} weights, not 2^bits and {SHAPES}")
        self.weights, self.threshold, self.version = array("f", weights), threshold, version

    def probability(self, text: str) -> float:
        weights = self.weights
        return 1 / (1 + math.exp(-sum(weights[i] for i in indices(text, self.bits))))

    def claims_nothing(self, text: str) -> bool:
        """Whether the clause reads as claiming nothing, and with a negation, names whose knowing it is and reads so
        without its negations too."""
        if self.probability(text) < self.threshold:
            return False
        plain = affirmed(text)
        return plain == text or _of_knowing(text) and self.probability(plain) >= self.threshold

    def refuses(self, answer: str, claims: Sequence[str], verdicts: Sequence[str], beside_a_refusal: bool) -> bool:
        """Whether an answer whose hand readings left these claims (with these verdicts) is a refusal: a few claims,
        not all supported and none contradicted (the context answers a claim it contradicts), in an answer with the
        rules' own cue of declining (scorers/refusal_gate.py), each claiming nothing. Beside a refusal a hand reading
        found, each must hold a cue of declining itself (refusal_gate.may_refuse): what else is said there is the
        partial refusal's claim ("I can't check your inbox, but we also send the code by text message"), judged."""
        return (0 < len(claims) <= MAX_CLAIMS and "contradicted" not in verdicts
                and verdicts.count("supported") < len(verdicts) and answer_may_refuse(answer)[0]
                and (not beside_a_refusal or all(map(may_refuse, claims))) and all(map(self.claims_nothing, claims)))


def encoded(weights: Sequence[float], threshold: float, version: str) -> str:
    """The model file's text: its version, threshold and weights (half precision, little-endian, compressed, base64)."""
    packed = base64.b64encode(zlib.compress(struct.pack(f"<{len(weights)}e", *weights), 9)).decode()
    return json.dumps({"version": version, "threshold": threshold, "weights": packed}) + "\n"


def decoded(text: str) -> ClaimsNothing:
    """The model of a model file's text (encoded's)."""
    saved = json.loads(text)
    raw = zlib.decompress(base64.b64decode(saved["weights"]))
    return ClaimsNothing(struct.unpack(f"<{len(raw) // 2}e", raw), float(saved["threshold"]), str(saved["version"]))


@functools.cache
def shipped() -> ClaimsNothing:
    """The model shipped with the package."""
    return decoded(resources.files(__package__).joinpath(MODEL_FILE).read_text(encoding="utf-8"))
