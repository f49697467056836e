"""Fixtures shared by the tests; helpers live in support.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import support
from support import RagpulseProcess, start_ragpulse

if TYPE_CHECKING:
    from fake_openai import FakeOpenAI


@pytest.fixture(params=support.KAFKA_CLIENTS)
def kafka_client(request: pytest.FixtureRequest) -> Iterator[str]:
    """Runs a Kafka test once per client library; kafka_args() passes it to the sidecar."""
    support.kafka_client = request.param
    yield request.param
    support.kafka_client = support.KAFKA_CLIENTS[0]


@pytest.fixture
def ragpulse_factory(tmp_path: Path) -> Iterator[Callable[..., RagpulseProcess]]:
    started: list[RagpulseProcess] = []

    def factory(*args: str, env: dict[str, str] | None = None, ready: bool = True) -> RagpulseProcess:
        instance = start_ragpulse(tmp_path, *args, env=env, ready=ready)
        started.append(instance)
        return instance

    yield factory
    for instance in started:
        if instance.process.poll() is None:
            instance.process.kill()
            instance.process.wait()


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    """A fake OpenAI-compatible server (tests/fake_openai.py) for the judge, on a free port; closed after the test."""
    # aiohttp and the demo's answers: loaded by the tests that use the server only
    from fake_openai import FakeOpenAI

    with FakeOpenAI() as server:
        yield server
