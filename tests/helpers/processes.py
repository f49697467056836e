"""Processes the tests start: set-up scripts' output, a server that exited, stopping one, its memory."""

from __future__ import annotations

import subprocess
from pathlib import Path


def script_stdout(args: list[str], timeout: float) -> str:
    """What a set-up script (a cached build or virtualenv) prints; its stderr's end when it fails."""
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stderr[-3000:]}"
    return done.stdout.strip()


def check_running(process: subprocess.Popen[bytes], log_path: Path, name: str) -> None:
    """Fails, with the end of its log, when a server the test started has exited."""
    if process.poll() is not None:
        raise AssertionError(f"{name} exited with {process.returncode}:\n{log_path.read_text()}")


def stop_process(process: subprocess.Popen[bytes] | None) -> None:
    if process is not None and process.poll() is None:
        process.terminate()
        process.wait(30)


def rss_bytes(pid: int) -> int:
    """The resident memory of process `pid` (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for process {pid}")
