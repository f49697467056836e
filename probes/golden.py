"""The golden set: labelled questions to replay against the live service.

A file of cases, JSONL (one object a line) or YAML (a list, or a mapping with `cases:`). A case:
`query`; `expected_answer` (for answer correctness); `relevant_chunk_ids` and, optionally, graded
`relevance` per id (1-3; an id without a grade is 1); `intent`, `difficulty` (simple, medium,
complex, boundary), `tags`; `expect_fallback: true` for a question the knowledge base cannot
answer. `id` names a case across runs (a paired comparison needs it); without one it is a digest
of the query. Every problem of a file is reported at once, with its line (JSONL) or case number.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
import yaml

DIFFICULTIES = ("simple", "medium", "complex", "boundary")
# Practitioners aim for about 40% simple, 30% medium and 30% complex or boundary questions.
DIFFICULTY_TARGETS = {"simple": 0.4, "medium": 0.3, "complex_or_boundary": 0.3}
NonEmpty = Annotated[str, msgspec.Meta(min_length=1, max_length=10_000)]
Grade = Annotated[int, msgspec.Meta(ge=1, le=3)]


class GoldenCase(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    query: NonEmpty
    id: Annotated[str, msgspec.Meta(min_length=1, max_length=256)] | None = None
    expected_answer: NonEmpty | None = None
    relevant_chunk_ids: list[Annotated[str, msgspec.Meta(min_length=1, max_length=256)]] = []
    relevance: dict[str, Grade] = {}
    intent: NonEmpty | None = None
    difficulty: Literal["simple", "medium", "complex", "boundary"] | None = None
    tags: list[NonEmpty] = []
    expect_fallback: bool = False

    @property
    def key(self) -> str:
        return self.id or "q-" + hashlib.blake2b(self.query.encode(), digest_size=6).hexdigest()

    @property
    def grades(self) -> dict[str, int]:
        """Every relevant id with its grade (1 when not graded)."""
        return {chunk_id: self.relevance.get(chunk_id, 1) for chunk_id in self.relevant_chunk_ids}


class GoldenError(Exception):
    def __init__(self, path: str, problems: list[str]) -> None:
        super().__init__(f"{path}: {len(problems)} problem(s)")
        self.path = path
        self.problems = problems


@dataclass(frozen=True)
class GoldenSet:
    name: str  # the file's stem: the golden_set label of its runs and metrics
    cases: list[GoldenCase]


def json_schema() -> dict[str, Any]:
    """The JSON Schema of one case, as published in collector/schemas/golden.v1.json."""
    schema = msgspec.json.schema(GoldenCase)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "urn:ragpulse:schema:golden:v1",
            "title": "ragpulse golden-set case, v1", **schema}


def load(path: str | Path) -> GoldenSet:
    """The golden set in `path`, or GoldenError with every problem (a line or case each)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise GoldenError(str(path), [f"cannot read it: {exc}"]) from None
    if path.suffix in (".yaml", ".yml"):
        raw, problems = _yaml_cases(text)
    else:
        raw, problems = _jsonl_cases(text)
    cases: list[GoldenCase] = []
    seen: dict[str, str] = {}
    for where, item in raw:
        try:
            case = msgspec.convert(item, GoldenCase)
        except msgspec.ValidationError as exc:
            problems.append(f"{where}: {exc}")
            continue
        problems.extend(f"{where}: {problem}" for problem in _case_problems(case))
        if case.key in seen:
            problems.append(f"{where}: id {case.key!r} is also {seen[case.key]}")
        seen.setdefault(case.key, where)
        cases.append(case)
    if not raw and not problems:
        problems.append("no cases")
    if problems:
        raise GoldenError(str(path), problems)
    return GoldenSet(path.stem, cases)


def _jsonl_cases(text: str) -> tuple[list[tuple[str, Any]], list[str]]:
    raw, problems = [], []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw.append((f"line {number}", msgspec.json.decode(line)))
        except msgspec.DecodeError as exc:
            problems.append(f"line {number}: not JSON ({exc})")
    return raw, problems


def _yaml_cases(text: str) -> tuple[list[tuple[str, Any]], list[str]]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        return [], [f"not YAML ({exc})"]
    if isinstance(data, dict) and "cases" in data:
        data = data["cases"]
    if not isinstance(data, list):
        return [], ["expected a list of cases, or a mapping with `cases:`"]
    return [(f"case {number}", item) for number, item in enumerate(data, 1)], []


def _case_problems(case: GoldenCase) -> list[str]:
    problems = []
    ungraded = sorted(set(case.relevance) - set(case.relevant_chunk_ids))
    if ungraded:
        problems.append(f"relevance grades ids that are not in relevant_chunk_ids: {', '.join(ungraded)}")
    if len(set(case.relevant_chunk_ids)) != len(case.relevant_chunk_ids):
        problems.append("relevant_chunk_ids lists an id twice")
    if case.expect_fallback and case.relevant_chunk_ids:
        problems.append("expect_fallback: true is a question the knowledge base cannot answer: it has no relevant chunks")
    return problems


@dataclass(frozen=True)
class Coverage:
    cases: int
    by_intent: dict[str, int]
    by_difficulty: dict[str, int]
    no_answer: int  # expect_fallback
    multi_chunk: int  # two or more relevant chunks
    with_expected_answer: int
    with_relevant_chunks: int

    def advice(self) -> list[str]:
        """Where the set is far (over 10 points) from the practitioners' mix, or lacks a kind of question."""
        notes = []
        known = sum(n for d, n in self.by_difficulty.items() if d != "unset")
        if known:
            shares = {
                "simple": self.by_difficulty.get("simple", 0) / known,
                "medium": self.by_difficulty.get("medium", 0) / known,
                "complex_or_boundary": (self.by_difficulty.get("complex", 0) + self.by_difficulty.get("boundary", 0)) / known,
            }
            for name, target in DIFFICULTY_TARGETS.items():
                if abs(shares[name] - target) > 0.10:
                    notes.append(f"{name.replace('_', ' ')}: {shares[name]:.0%} of the cases with a difficulty, "
                                 f"aim for about {target:.0%}")
        if self.by_difficulty.get("unset"):
            notes.append(f"{self.by_difficulty['unset']} case(s) without a difficulty")
        if not self.no_answer:
            notes.append("no question the knowledge base cannot answer (expect_fallback: true)")
        if not self.multi_chunk:
            notes.append("no question that needs two or more chunks")
        return notes


def coverage(golden: GoldenSet) -> Coverage:
    cases = golden.cases
    return Coverage(
        cases=len(cases),
        by_intent=dict(Counter(case.intent or "unset" for case in cases).most_common()),
        by_difficulty={d: n for d in (*DIFFICULTIES, "unset")
                       if (n := sum(1 for case in cases if (case.difficulty or "unset") == d))},
        no_answer=sum(case.expect_fallback for case in cases),
        multi_chunk=sum(len(case.relevant_chunk_ids) >= 2 for case in cases),
        with_expected_answer=sum(case.expected_answer is not None for case in cases),
        with_relevant_chunks=sum(bool(case.relevant_chunk_ids) for case in cases),
    )
