"""The README's reference tables name exactly what the code has."""

from __future__ import annotations

import re
from pathlib import Path

from support import exported_metrics

from ragpulse.errors import RejectReason
from ragpulse.collector.events import FEEDBACK_KINDS

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


def test_metrics_table_lists_every_metric_with_its_type_and_labels() -> None:
    documented = {
        name: (kind, tuple(label.strip() for label in labels.split(",") if label.strip()))
        for name, kind, labels in re.findall(r"^\| `(ragpulse_\w+)` \| (\w+) \|([^|]*)\|", README, re.M)
    }
    actual = exported_metrics()
    assert documented == actual


def test_rejection_reasons_and_feedback_kinds_are_documented() -> None:
    for reason in RejectReason:
        assert f"`{reason.value}`" in README
    for kind in FEEDBACK_KINDS:
        assert f"`{kind}`" in README
