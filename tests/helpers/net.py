"""HTTP calls, free ports and a black hole on loopback."""

from __future__ import annotations

import contextlib
import json
import random
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any


_LOWEST_PORT = 10_000  # above the well-known and registered services a developer's machine may run
_handed_out: set[int] = set()


def _ephemeral_range_start() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32_768  # Linux's default


def free_port() -> int:
    """A loopback port nothing listens on, for a server a test starts later. Chosen below the kernel's ephemeral
    range: a port from that range can become the source port of some outgoing connection (a sidecar retrying an
    endpoint that is down) before its server binds, which failed a test with "address already in use"."""
    chooser = random.SystemRandom()
    highest = _ephemeral_range_start()
    for _ in range(1_000):
        port = chooser.randrange(_LOWEST_PORT, highest)
        if port in _handed_out:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError(f"no free loopback port between {_LOWEST_PORT} and {highest}")


@dataclass
class BlackHole:
    port: int
    accepted: int = 0  # connections taken, none ever answered


@contextlib.contextmanager
def black_hole() -> Iterator[BlackHole]:
    """A TCP server on loopback that accepts every connection and never answers nor closes one: an endpoint
    that hangs."""
    server = socket.create_server(("127.0.0.1", 0))
    hole = BlackHole(server.getsockname()[1])
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:  # shut down: the test is over
                return
            held.append(connection)
            hole.accepted += 1

    thread = threading.Thread(target=accept, name="black-hole", daemon=True)
    thread.start()
    try:
        yield hole
    finally:
        server.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept (close alone does not, on Linux)
        server.close()
        thread.join(5)
        for connection in held:
            connection.close()


@dataclass
class HttpResult:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def http(method: str, url: str, body: bytes | None = None, headers: dict[str, str] | None = None) -> HttpResult:
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return HttpResult(response.status, dict(response.headers), response.read())
    except urllib.error.HTTPError as exc:
        return HttpResult(exc.code, dict(exc.headers), exc.read())
