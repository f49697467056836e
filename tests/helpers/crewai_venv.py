"""CrewAI's own virtualenv for tests/test_tool_agents.py: crewai pins pydantic, httpx and others below what the suite's
environment holds, so its app (tests/crewai/app.py) runs in `.cache/venv-crewai`, made from
tests/crewai/requirements.txt when missing or when the requirements changed (a copy of them inside marks what it
holds). By hand: `python -m venv .cache/venv-crewai && .cache/venv-crewai/bin/pip install -r tests/crewai/requirements.txt`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = ROOT / "tests" / "crewai" / "requirements.txt"
VENV = ROOT / ".cache" / "venv-crewai"


def crewai_python() -> Path:
    """The virtualenv's python, the venv made or brought up to the requirements first (minutes, the first time)."""
    python, marker = VENV / "bin" / "python", VENV / "requirements.txt"
    wanted = REQUIREMENTS.read_text()
    if python.exists() and marker.exists() and marker.read_text() == wanted:
        return python
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, timeout=120)
    installed = subprocess.run([str(python), "-m", "pip", "install", "-q", "-r", str(REQUIREMENTS)],
                               capture_output=True, text=True, timeout=1200)
    assert installed.returncode == 0, installed.stderr
    marker.write_text(wanted)
    return python
