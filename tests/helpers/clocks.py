"""Time under the test's control: a manual clock, an event loop in virtual time."""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class Clock:
    """A clock that moves only when the test moves it (`clock.now += 60`): give it to what takes a `clock`."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop in virtual time: when every task waits, the clock jumps to the next timer instead of
    sleeping, so `asyncio.sleep(60)` takes no wall time and timers fire in exactly their order. Its `time`
    is the clock to give components that date with a clock and wait with asyncio (they then agree).
    For code without I/O: a socket or a thread would see the virtual jumps as real waits."""

    def __init__(self) -> None:
        self._now = 0.0
        loop = self

        class Selector(selectors.DefaultSelector):  # type: ignore[misc, valid-type]
            def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
                if timeout is None:  # no timer is due: only another thread can wake the loop
                    ready = super().select(30.0)
                    if not ready:
                        raise RuntimeError("virtual time: every task waits and no timer is set (a deadlock)")
                    return ready
                loop._now += timeout
                return super().select(0)

        super().__init__(Selector())

    def time(self) -> float:
        return self._now


def run_in_virtual_time(main: Coroutine[Any, Any, T]) -> T:
    """asyncio.run(main) on a VirtualTimeLoop, which starts at 0.0; inside, the clock is
    `asyncio.get_running_loop().time`."""
    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        return runner.run(main)
