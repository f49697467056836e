"""The sections of the probes (ragpulse.probes): the RAG services asked golden questions, and when."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import msgspec

from ragpulse.config.base import Positive, PositiveFloat, Rate, RuleName, _Section, missing_files
from ragpulse.errors import ConfigProblem


class ProbeResponse(_Section):
    # Where the answer and the retrieved chunks are in the response: JSONPath (jsonpath-ng); the chunk
    # fields are relative to each chunk. A field the response does not have is "not reported".
    answer: str = "$.answer"
    chunks: str | None = "$.chunks[*]"
    chunk_id: str = "id"
    chunk_text: str = "text"
    chunk_score: str = "score"
    release: str | None = None  # the service's release, when its response says it (else "not_reported")


class ProbeTarget(_Section):
    # A RAG service's own HTTP API, asked the golden set's questions (`ragpulse probe run`).
    name: RuleName
    url: str
    # json: POST {"query": ...}, the answer and chunks as ragpulse's event contract has them;
    # openai_chat: an OpenAI-compatible chat completions URL, the answer in choices[0].message.content.
    preset: Literal["json", "openai_chat"] = "json"
    method: Literal["POST", "GET"] = "POST"
    # The request body, every "{query}" in its strings replaced by the question (null: the preset's).
    body: Any = None
    model: str | None = None  # openai_chat: the model to ask
    # Header values: literal, "env:NAME" (an environment variable) or "file:PATH" (a file's content).
    headers: dict[str, str] = {}
    response: ProbeResponse | None = None  # null: the preset's
    timeout_seconds: PositiveFloat = 30.0


class ProbeSchedule(_Section):
    # `ragpulse run` asks this golden set of this target every interval (after a random 0..jitter delay).
    golden: str
    target: RuleName
    interval_seconds: PositiveFloat = 3600.0
    jitter_seconds: Annotated[float, msgspec.Meta(ge=0)] = 60.0


class ProbesConfig(_Section):
    targets: list[ProbeTarget] = []
    schedules: list[ProbeSchedule] = []
    # Rank cut-off of the retrieval metrics (hit rate@k, MRR, recall@k, precision@k, nDCG@k).
    k: Positive = 5
    concurrency: Positive = 4
    max_requests_per_second: PositiveFloat = 10.0
    # Every probe request carries this header (the run's id), so the service can tell probes apart.
    probe_header: str = "X-Ragpulse-Probe"
    # Runs and their per-question results (`ragpulse probe list|show|compare`).
    db_path: str = "ragpulse-probes.sqlite3"
    # Golden-set candidates from production (answers users signalled on), kept in results.sqlite_path for
    # `ragpulse golden candidates`: at most this many; silent accepts (most quiet answers) only at this rate.
    candidates_max_rows: Positive = 10_000
    candidate_silent_accept_rate: Rate = 0.05

    def validate(self) -> list[ConfigProblem]:
        """What a probe target cannot work with; header sources (env, files) are read when a run starts."""
        problems: list[ConfigProblem] = []
        names: set[str] = set()
        for index, target in enumerate(self.targets):
            where = f"probes.targets[{index}]"
            if target.name in names:
                problems.append(ConfigProblem(f"{where}.name", f"duplicate target name {target.name!r}"))
            names.add(target.name)
            problems += _target_problems(where, target)
        for index, schedule in enumerate(self.schedules):
            where = f"probes.schedules[{index}]"
            if schedule.target not in names:
                problems.append(ConfigProblem(f"{where}.target", f"no probes.targets entry named {schedule.target!r}"))
            problems += missing_files(where, schedule, "golden")
        return problems


def _target_problems(where: str, target: ProbeTarget) -> list[ConfigProblem]:
    """One target's problems; `where` is its dotted path, e.g. probes.targets[0]."""
    problems: list[ConfigProblem] = []
    if not re.match(r"^https?://[^/\s]+", target.url):
        problems.append(ConfigProblem(f"{where}.url", f"expected an http:// or https:// URL, got {target.url!r}"))
    if target.preset == "openai_chat" and target.model is None and target.body is None:
        problems.append(ConfigProblem(f"{where}.model", "the openai_chat preset needs the model to ask (or a body)"))
    for header, value in target.headers.items():
        if value.startswith("env:") and not value[4:]:
            problems.append(ConfigProblem(f"{where}.headers.{header}", "env: needs a variable name, e.g. env:RAG_TOKEN"))
    if target.response is not None:
        import jsonpath_ng.ext  # 30 ms to import: only when a target says where its fields are

        for option in ("answer", "chunks", "chunk_id", "chunk_text", "chunk_score", "release"):
            expression = getattr(target.response, option)
            if expression is None:
                continue
            try:
                jsonpath_ng.ext.parse(expression)
            except Exception as exc:  # jsonpath-ng raises several types for a bad expression
                problems.append(ConfigProblem(f"{where}.response.{option}", f"not a JSONPath expression: {exc}"))
    return problems
