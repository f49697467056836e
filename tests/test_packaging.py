"""The wheel holds every subpackage, and the tests run against an installed (not editable) ragpulse."""

from __future__ import annotations

import importlib
import os
import tomllib
from pathlib import Path

import pytest

import ragpulse

ROOT = Path(__file__).resolve().parent.parent
# Every top-level folder that is a package of the wheel (tests/ and bench/ are not packages).
TOP_LEVEL = tuple(sorted(init.parent.name for init in ROOT.glob("*/__init__.py")))


def source_packages() -> set[str]:
    found = {"ragpulse"}
    for top in TOP_LEVEL:
        for init in (ROOT / top).rglob("__init__.py"):
            found.add(".".join(["ragpulse", *init.parent.relative_to(ROOT).parts]))
    return found


@pytest.mark.unit
def test_every_source_package_is_listed_in_pyproject() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    assert listed == source_packages()


@pytest.mark.unit
def test_every_package_imports_from_the_installed_distribution() -> None:
    for name in sorted(source_packages()):
        module = importlib.import_module(name)
        assert module.__file__ is not None


@pytest.mark.unit
@pytest.mark.skipif(os.environ.get("TEST_RAGPULSE_INSTALLED") != "1", reason="set by scripts/test, which installs a wheel")
def test_tests_run_against_a_regular_install_not_the_source_tree() -> None:
    installed = Path(ragpulse.__file__).resolve().parent
    assert "site-packages" in installed.parts
    assert installed != ROOT
    assert (installed / "config" / "ragpulse.example.yaml").is_file()  # package data shipped


FAKE_PIP = """#!/bin/sh
echo "$@" >> "$(dirname "$0")/pip.log"
if [ "$1" = wheel ]; then touch "$5/ragpulse-0.1.0-py3-none-any.whl"; fi
"""


def test_the_scripts_install_only_when_the_package_changed(tmp_path: Path) -> None:
    """scripts/test and scripts/demo reinstall only when a file the wheel is built from changed, or more extras
    are asked for than were installed (a stamp of the package's hash in the virtualenv)."""
    import shutil
    import subprocess
    import sys

    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "venv.sh", root / "scripts" / "venv.sh")
    for name in ("pyproject.toml", "README.md", "__init__.py", "_native.pyi"):
        (root / name).write_text(name)
    for top in TOP_LEVEL:
        (root / top).mkdir()
        (root / top / "__init__.py").write_text(top)
    (root / "native" / "src").mkdir(parents=True)
    (root / "native" / "src" / "lib.rs").write_text("// the crate")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    (venv / "bin" / "pip").write_text(FAKE_PIP)
    (venv / "bin" / "pip").chmod(0o755)
    log = venv / "bin" / "pip.log"

    def install(extras: str) -> int:
        before = len(log.read_text().splitlines()) if log.exists() else 0
        subprocess.run(["bash", "-c", f'source "{root}/scripts/venv.sh"; install_ragpulse "{extras}"'], check=True,
                       env={**os.environ, "RAGPULSE_VENV": str(venv)}, capture_output=True)
        return (len(log.read_text().splitlines()) if log.exists() else 0) - before

    assert install("[test]") == 3  # wheel, install with the extras, force-reinstall the package
    assert install("[test]") == 0
    assert install("") == 0  # fewer extras than installed
    for top in TOP_LEVEL:  # every package the wheel holds is in the hash
        (root / top / "__init__.py").write_text("changed")
        assert install("") == 3, top
    (root / "_native.pyi").write_text("changed")  # and the compiled core's stub
    assert install("") == 3
    assert install("[test]") == 3  # the extras were installed from the old files
    assert install("") == 0
    (root / "native" / "src" / "lib.rs").write_text("// changed: the extension module is in the wheel")
    assert install("[test]") == 3
    (root / "native" / "target").mkdir()
    (root / "native" / "target" / "cache").write_text("cargo's build output is not")
    assert install("[test]") == 0
    (root / "tests").mkdir()
    (root / "tests" / "test_new.py").write_text("a test is not in the wheel")
    assert install("[test]") == 0
