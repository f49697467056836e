"""Golden-set probes without a service: the retrieval metrics against hand-computed values, a golden set's
validation and coverage, its published schema, and the gates' parsing (`ragpulse probe run` against a real RAG service
is tests/test_probes.py's)."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest
import yaml
from helpers.sidecar import ragpulse_command

from ragpulse.probes import golden, retrieval
from ragpulse.probes.runner import parse_gate

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "golden_shop.jsonl"
LOG3 = math.log2(3)

@pytest.mark.unit
@pytest.mark.parametrize(
    ("retrieved", "grades", "k", "expected"),
    [
        # fewer than k came back: precision still over k
        (["a", "b", "c"], {"b": 1}, 5, (1.0, 0.5, 1.0, 0.2, 1 / LOG3)),
        # an id retrieved twice counts once, at its first rank
        (["b", "b", "a"], {"a": 1, "b": 1}, 3, (1.0, 1.0, 1.0, 2 / 3, (1 + 0.5) / (1 + 1 / LOG3))),
        # nothing retrieved
        ([], {"a": 1}, 5, (0.0, 0.0, 0.0, 0.0, 0.0)),
        # the relevant chunk is past k
        (["x", "a"], {"a": 1}, 1, (0.0, 0.0, 0.0, 0.0, 0.0)),
        # graded relevance: the grade-1 chunk first, the grade-3 one second
        (["c", "a"], {"a": 3, "c": 1}, 2, (1.0, 1.0, 1.0, 1.0, (1 + 7 / LOG3) / (7 + 1 / LOG3))),
        # ties in score keep the service's order; a chunk without an id is never relevant
        ([None, "b", "a"], {"a": 1}, 5, (1.0, 1 / 3, 1.0, 0.2, 0.5)),
        # two relevant, one found
        (["a", "x"], {"a": 2, "b": 2}, 2, (1.0, 1.0, 0.5, 0.5, 3 / (3 + 3 / LOG3))),
    ],
)
def test_retrieval_metrics_against_hand_computed_values(retrieved: list[str | None], grades: dict[str, int], k: int,
                                                        expected: tuple[float, ...]) -> None:
    scores = retrieval.score(retrieved, grades, k)
    assert scores is not None
    assert (scores.hit, scores.reciprocal_rank, scores.recall, scores.precision) == pytest.approx(expected[:4])
    assert scores.ndcg == pytest.approx(expected[4])


@pytest.mark.unit
def test_no_relevant_chunks_no_retrieval_metrics_and_k_must_be_positive() -> None:
    assert retrieval.score(["a"], {}, 5) is None
    with pytest.raises(ValueError, match="k must be at least 1"):
        retrieval.score(["a"], {"a": 1}, 0)


@pytest.mark.unit
def test_a_golden_set_reports_every_problem_with_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([
        json.dumps({"id": "a", "query": "Q?", "relevant_chunk_ids": ["x"], "relevance": {"y": 2}}),
        "{not json",
        json.dumps({"id": "a", "query": "Q2?"}),
        json.dumps({"query": ""}),
        json.dumps({"query": "Q3?", "colour": "red"}),
        json.dumps({"query": "Q4?", "expect_fallback": True, "relevant_chunk_ids": ["x"]}),
        json.dumps({"query": "Q5?", "difficulty": "hard"}),
    ]) + "\n")
    with pytest.raises(golden.GoldenError) as caught:
        golden.load(bad)
    problems = caught.value.problems
    assert problems[0].startswith("line 2: not JSON")
    assert problems[1:] == [
        "line 1: relevance grades ids that are not in relevant_chunk_ids: y",
        "line 3: id 'a' is also line 1",
        "line 4: Expected `str` of length >= 1 - at `$.query`",
        "line 5: Object contains unknown field `colour`",
        "line 6: expect_fallback: true is a question the knowledge base cannot answer: it has no relevant chunks",
        "line 7: Invalid enum value 'hard' - at `$.difficulty`",
    ]
    as_yaml = tmp_path / "set.yaml"
    as_yaml.write_text(yaml.safe_dump({"cases": [{"query": "Where is my order?", "relevant_chunk_ids": ["kb-1"]}]}))
    loaded = golden.load(as_yaml)
    assert loaded.name == "set" and loaded.cases[0].key.startswith("q-") and loaded.cases[0].grades == {"kb-1": 1}


def test_golden_check_reports_coverage() -> None:
    report = golden.coverage(golden.load(GOLDEN))
    assert (report.cases, report.no_answer, report.multi_chunk, report.with_expected_answer) == (32, 2, 2, 30)
    assert report.by_difficulty == {"simple": 18, "medium": 7, "complex": 5, "boundary": 2}
    assert report.by_intent["shipping"] == 7 and report.by_intent["unknown"] == 2
    # 18/32 simple is 16 points over the 40% practitioners aim for; 7/32 complex or boundary is within 10 of 30%
    assert report.advice() == ["simple: 56% of the cases with a difficulty, aim for about 40%"]
    done = subprocess.run([*ragpulse_command(), "golden", "check", str(GOLDEN)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "32 cases, valid" in done.stdout and "note: simple: 56%" in done.stdout


@pytest.mark.unit
def test_the_published_golden_schema_is_current() -> None:
    committed = json.loads((Path(__file__).parent.parent / "collector" / "schemas" / "golden.v1.json").read_text())
    assert committed == golden.json_schema(), "regenerate: ragpulse golden schema > collector/schemas/golden.v1.json"


@pytest.mark.unit
def test_gates_parse_or_say_what_is_wrong() -> None:
    assert [str(t) for t in parse_gate("hit_rate>=0.9, mrr>=0.7,correctness>4")] == ["hit_rate>=0.9", "mrr>=0.7", "correctness>4"]
    with pytest.raises(ValueError, match="unknown metric 'hits'"):
        parse_gate("hits>=0.9")
    with pytest.raises(ValueError, match="is not METRIC>=VALUE"):
        parse_gate("hit_rate=0.9")
