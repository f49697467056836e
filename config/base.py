"""What the section modules share: the `_Section` base, the constrained value types, reading a
secret, and the checks several sections make (a file that must exist, a secret given two ways)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from ragpulse.errors import ConfigProblem

Positive = Annotated[int, msgspec.Meta(gt=0)]
PositiveFloat = Annotated[float, msgspec.Meta(gt=0)]
NonNegativeFloat = Annotated[float, msgspec.Meta(ge=0)]
Port = Annotated[int, msgspec.Meta(ge=0, le=65535)]
LabelName = Literal["app", "route", "model", "release"]
RuleName = Annotated[str, msgspec.Meta(pattern=r"^[a-z][a-z0-9_]{0,62}$")]
Rate = Annotated[float, msgspec.Meta(ge=0, le=1)]


class _Section(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    pass


def read_secret(value: str | None, path: str | None) -> str | None:
    """A secret from its file (e.g. a mounted Kubernetes secret) when one is set, else the value itself."""
    return Path(path).read_text(encoding="utf-8").strip() if path else value


def header_value(name: str, value: str) -> str:
    """A header's value as configured: literal, "env:NAME" (an environment variable) or "file:PATH" (a file's
    content, e.g. a mounted Kubernetes secret). ValueError says which is missing."""
    if value.startswith("env:"):
        found = os.environ.get(value[4:])
        if found is None:
            raise ValueError(f"header {name}: the environment variable {value[4:]} is not set")
        return found
    if value.startswith("file:"):
        try:
            return Path(value[5:]).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ValueError(f"header {name}: cannot read {value[5:]}: {exc.strerror}") from None
    return value


def given_twice(section: str, struct: Any, option: str) -> list[ConfigProblem]:
    """A secret given both inline and as a file."""
    if getattr(struct, option) is not None and getattr(struct, f"{option}_file") is not None:
        return [ConfigProblem(f"{section}.{option}_file", f"set {option} or {option}_file, not both")]
    return []


def missing_files(section: str, struct: Any, *options: str) -> list[ConfigProblem]:
    """The options of `struct` naming a file that is not there."""
    paths = [(option, getattr(struct, option)) for option in options]
    return [ConfigProblem(f"{section}.{option}", f"no such file: {path}")
            for option, path in paths if path is not None and not Path(path).is_file()]
