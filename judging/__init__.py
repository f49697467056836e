"""Judging: the sampler and its budgets, the LLM and local judges, the workers, attribution, calibration
against human reviews, the rate estimators, and the records a judgment leaves.

What the rest of ragpulse may use is named here; the modules behind it are the package's own (an
import-linter contract in pyproject.toml holds every other package to this surface). Each name is loaded from its
module when first asked for, so a package that needs only the records (the result sinks, interop) does not load
the judges, and with them the scorers they use. Judgments leave through one declared exit, `JudgmentExit`, to the
consumers registered on it.
"""

from __future__ import annotations

import importlib
from typing import Any

# Public name -> the module of this package that defines it.
_SURFACE = {
    "AuditedJudgment": "agreement",
    "ReviewedRow": "agreement",
    "answer_length": "agreement",
    "report": "agreement",
    "STAGES": "attribution",
    "RequestRateLimiter": "budget",
    "SpendBudget": "budget",
    "Calibrator": "calibration",
    "Interval": "estimators",
    "Stratum": "estimators",
    "stratified": "estimators",
    "two_proportion_z": "estimators",
    "wilson": "estimators",
    "hallucination_rates": "estimators",
    "newcombe_difference": "estimators",
    "Consumer": "exit",
    "JudgmentExit": "exit",
    "BUILTIN_PROMPT": "llm_judge",
    "LlmJudge": "llm_judge",
    "builtin_template": "llm_judge",
    "parse_verdict": "llm_judge",
    "response_format": "llm_judge",
    "LocalJudge": "local_judge",
    "JudgmentMetrics": "metrics",
    "count_retries": "metrics",
    "CandidateRecord": "records",
    "JudgmentRecord": "records",
    "Record": "records",
    "ReviewRecord": "records",
    "Select": "records",
    "SignalRecord": "records",
    "judgments_only": "records",
    "record_bytes": "records",
    "RoutineFloor": "routine_floor",
    "FEEDBACK_CLASSES": "sampler",
    "JudgeQueue": "sampler",
    "JudgeSampler": "sampler",
    "SamplingPolicy": "sampler",
    "TraceFilter": "sampler",
    "ContextRecorder": "utilisation",
    "rank_label": "utilisation",
    "IRRELEVANT_AT_MOST": "verdicts",
    "JUDGED_VERDICTS": "verdicts",
    "Judgment": "verdicts",
    "RELEVANT_CHUNK_AT_LEAST": "verdicts",
    "CircuitBreaker": "workers",
    "JudgeWorkers": "workers",
    "JudgmentCache": "workers",
}

__all__ = sorted(_SURFACE)


def __getattr__(name: str) -> Any:
    module = _SURFACE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
