"""The wheel holds every subpackage, and the tests run against an installed (not editable) ragpulse."""

from __future__ import annotations

import importlib
import os
import tomllib
from pathlib import Path

import pytest

import ragpulse

ROOT = Path(__file__).resolve().parent.parent
TOP_LEVEL = ("app", "collector", "config", "sources", "scorers", "judging", "probes", "exporters", "mixin")


def source_packages() -> set[str]:
    found = {"ragpulse"}
    for top in TOP_LEVEL:
        for init in (ROOT / top).rglob("__init__.py"):
            found.add(".".join(["ragpulse", *init.parent.relative_to(ROOT).parts]))
    return found


def test_every_source_package_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    assert listed == source_packages()


def test_every_package_imports_from_the_installed_distribution() -> None:
    for name in sorted(source_packages()):
        module = importlib.import_module(name)
        assert module.__file__ is not None


@pytest.mark.skipif(os.environ.get("TEST_RAGPULSE_INSTALLED") != "1", reason="set by scripts/test, which installs a wheel")
def test_tests_run_against_a_regular_install_not_the_source_tree() -> None:
    installed = Path(ragpulse.__file__).resolve().parent
    assert "site-packages" in installed.parts
    assert installed != ROOT
    assert (installed / "config" / "ragpulse.example.yaml").is_file()  # package data shipped
