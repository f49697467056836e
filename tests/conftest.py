"""Fixtures shared by the tests, and the `unit` marker's guard; the helpers live in helpers/, one module a topic."""

from __future__ import annotations

import contextlib
import functools
import socket
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import matplotlib.font_manager  # noqa: F401  (see below)
import pytest
from helpers import kafka_broker
from helpers.sidecar import RagpulseProcess, start_ragpulse

if TYPE_CHECKING:
    from helpers.fake_openai import FakeOpenAI

# matplotlib lists the machine's fonts with fc-list the first time it is imported on a machine (then caches them in
# its config directory): imported above, before any test, so that a unit test that loads the report's plots does
# not start that process on a fresh machine, where the `unit` guard below would fail it.


@pytest.fixture(params=kafka_broker.KAFKA_CLIENTS)
def kafka_client(request: pytest.FixtureRequest) -> str:
    """Runs a Kafka test once per client library (kafka.client)."""
    return str(request.param)


@pytest.fixture
def kafka_args(kafka_client: str) -> kafka_broker.KafkaArgs:
    """helpers.kafka_broker.kafka_args for this run's client library: the flags that point a sidecar at the broker."""
    return functools.partial(kafka_broker.kafka_args, client=kafka_client)


@pytest.fixture
def ragpulse_factory(tmp_path: Path) -> Iterator[Callable[..., RagpulseProcess]]:
    started: list[RagpulseProcess] = []

    def factory(*args: str, env: dict[str, str] | None = None, ready: bool = True,
                host: str = "127.0.0.1") -> RagpulseProcess:
        instance = start_ragpulse(tmp_path, *args, env=env, ready=ready, host=host)
        started.append(instance)
        return instance

    yield factory
    for instance in started:
        if instance.process.poll() is None:
            instance.process.kill()
            instance.process.wait()


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    """A fake OpenAI-compatible server (helpers/fake_openai.py) for the judge, on a free port; closed after the test."""
    # aiohttp and the demo's answers: loaded by the tests that use the server only
    from helpers.fake_openai import FakeOpenAI

    with FakeOpenAI() as server:
        yield server


# -- the `unit` marker: a test so marked starts no process and binds no port, or fails saying so -----------------

def _refuse(what: str) -> Callable[..., NoReturn]:
    def refused(*args: Any, **kwargs: Any) -> NoReturn:
        raise AssertionError(f"a test marked unit {what}: take the mark off, or the process or port out of it")

    return refused


_bind = socket.socket.bind


def _bind_no_port(sock: socket.socket, address: Any) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        _refuse(f"binds a port ({address})")()
    _bind(sock, address)  # a Unix socket: a file, no port


@contextlib.contextmanager
def _no_process_or_port(item: pytest.Item) -> Iterator[None]:
    if item.get_closest_marker("unit") is None:
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        # Where every subprocess starts (run, Popen, asyncio's subprocesses) and where every server binds.
        patch.setattr(subprocess.Popen, "_execute_child", _refuse("starts a process"))
        patch.setattr(socket.socket, "bind", _bind_no_port)
        yield


def _reaches_the_broker(item: pytest.Item) -> bool:
    """Whether a test may talk to the Kafka broker: it takes the Kafka fixtures, or its module imported a function of
    helpers.kafka_broker (tests/test_scale_out.py calls kafka_args itself)."""
    module = getattr(item, "module", None)
    return "kafka_client" in getattr(item, "fixturenames", ()) or module is not None and any(
        getattr(value, "__module__", None) == kafka_broker.__name__ for value in vars(module).values())


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks `kafka` the tests that reach the broker: scripts/test runs them in a pytest of their own, one after the
    other, because some stop the one broker every Kafka test shares."""
    for item in items:
        if _reaches_the_broker(item):
            item.add_marker(pytest.mark.kafka)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    with _no_process_or_port(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    with _no_process_or_port(item):
        return (yield)
