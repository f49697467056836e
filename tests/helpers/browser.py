"""A page as headless Chromium (Debian's `chromium`) renders it, driven over the DevTools protocol with aiohttp's
websocket client: what a script reads off the rendered page, and a screenshot of the whole page."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import subprocess
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp
from helpers.net import free_port, http
from helpers.waiting import wait_until


def chromium() -> str:
    found = shutil.which("chromium")
    assert found, "chromium is missing: scripts/test installs it (scripts/tools.sh)"
    return found


@contextmanager
def page(width: int, height: int = 900) -> Iterator[str]:
    """Headless Chromium showing one blank page at `width` x `height` CSS pixels: the page's DevTools websocket URL."""
    port = free_port()
    browser = subprocess.Popen([chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                                f"--remote-debugging-port={port}", f"--window-size={width},{height}", "about:blank"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: _page(port) is not None, timeout=30, what="Chromium's DevTools endpoint")
        yield _page(port) or ""
    finally:
        browser.terminate()
        browser.wait(30)


def caller(ws: aiohttp.ClientWebSocketResponse) -> Callable[..., Awaitable[dict[str, Any]]]:
    """`call(method, **params)`: one DevTools command over `ws`, its result."""
    ids = iter(range(1, 1_000))

    async def call(method: str, **params: Any) -> dict[str, Any]:
        number = next(ids)
        await ws.send_json({"id": number, "method": method, "params": params})
        async for message in ws:
            answer = json.loads(message.data)
            if answer.get("id") == number:
                return answer.get("result", {})
        raise AssertionError("Chromium closed the DevTools connection")

    return call


def render(url: str, script: str, *, width: int = 1200) -> tuple[Any, bytes]:
    """`script`'s value on the loaded page, and a PNG of the whole page at `width` CSS pixels."""
    with page(width) as websocket_url:
        return asyncio.run(_render(websocket_url, url, script, width))


def _page(port: int) -> str | None:
    try:
        pages = json.loads(http("GET", f"http://127.0.0.1:{port}/json/list").body)
    except OSError:
        return None
    return next((page["webSocketDebuggerUrl"] for page in pages if page.get("type") == "page"), None)


async def _render(websocket_url: str, url: str, script: str, width: int) -> tuple[Any, bytes]:
    async with aiohttp.ClientSession() as session, session.ws_connect(websocket_url, max_msg_size=0) as ws:
        call = caller(ws)
        await call("Page.enable")
        await call("Page.navigate", url=url)
        async for message in ws:  # the page and everything it holds are loaded
            if json.loads(message.data).get("method") == "Page.loadEventFired":
                break
        value = (await call("Runtime.evaluate", expression=script, returnByValue=True))["result"].get("value")
        height = (await call("Runtime.evaluate", expression="document.documentElement.scrollHeight",
                             returnByValue=True))["result"]["value"]
        shot = await call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1})
        return value, base64.b64decode(shot["data"])


def save(png: bytes, path: Path, *, height: int) -> None:
    """The screenshot's top `height` pixels, as a PNG at `path` (a picture for the docs)."""
    import io

    import matplotlib.image

    path.parent.mkdir(parents=True, exist_ok=True)
    matplotlib.image.imsave(path, matplotlib.image.imread(io.BytesIO(png), format="png")[:height], format="png")
