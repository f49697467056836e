"""CrewAI's own virtualenv for tests/test_tool_agents.py: crewai pins pydantic, httpx and others below what the suite's
environment holds, so its app (tests/crewai/app.py) runs in `venv-crewai` under the tests' cache of virtualenvs
(`$RAGPULSE_CACHE`, else ~/.cache/ragpulse, beside Phoenix's: kept across clones), made from
tests/crewai/requirements.txt when missing or when the requirements changed (a copy of them inside marks what it
holds). scripts/test starts making it in the background; the test waits on its lock. By hand:
`python -m venv ~/.cache/ragpulse/venv-crewai && ~/.cache/ragpulse/venv-crewai/bin/pip install -r tests/crewai/requirements.txt`."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = ROOT / "tests" / "crewai" / "requirements.txt"
VENV = Path(os.environ.get("RAGPULSE_CACHE", Path.home() / ".cache" / "ragpulse")) / "venv-crewai"


def _ready(python: Path, marker: Path, wanted: str) -> bool:
    return python.exists() and marker.exists() and marker.read_text() == wanted


def crewai_python() -> Path:
    """The virtualenv's python, the venv made or brought up to the requirements first (minutes, the first time)."""
    python, marker = VENV / "bin" / "python", VENV / "requirements.txt"
    wanted = REQUIREMENTS.read_text()
    if _ready(python, marker, wanted):
        return python
    VENV.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{VENV}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one maker at a time: scripts/test's background one, or a test's
        if _ready(python, marker, wanted):
            return python
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, timeout=120)
        installed = subprocess.run([str(python), "-m", "pip", "install", "-q", "-r", str(REQUIREMENTS)],
                                   capture_output=True, text=True, timeout=1200)
        assert installed.returncode == 0, installed.stderr
        marker.write_text(wanted)
    return python


if __name__ == "__main__":  # scripts/test: `python tests/helpers/crewai_venv.py`, in the background
    print(crewai_python())
