"""Waiting on a condition, never for a fixed time."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


def wait_until(check: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


async def wait_until_async(check: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    """wait_until inside an event loop: the loop's other tasks (and their I/O) go on while it waits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")
