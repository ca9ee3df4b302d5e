"""Drive headless Chromium over the DevTools protocol with the standard library only (no websocket
package): open a page, wait for its load event, evaluate JavaScript, take screenshots.

Used by ``scripts/screenshots.py`` (report screenshots), ``bench/report.py`` (first paint of a report)
and ``tests/core/test_findings_view.py`` (the findings view opens, pages and filters in a browser).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any


def chromium() -> str | None:
    """The Chromium executable, or None when none is installed."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class _WebSocket:
    """A minimal RFC 6455 client: masked text frames out, (fragmented) text frames in."""

    def __init__(self, url: str, timeout: float):
        m = re.match(r"ws://([^:/]+):(\d+)(/.*)", url)
        assert m, url
        self.sock = socket.create_connection((m.group(1), int(m.group(2))), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET {m.group(3)} HTTP/1.1\r\nHost: {m.group(1)}:{m.group(2)}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise RuntimeError(f"websocket handshake failed: {head[:200]!r}")

    def _exact(self, n: int) -> bytes:
        data = bytearray()
        while len(data) < n:
            part = self.sock.recv(n - len(data))
            if not part:
                raise ConnectionError("DevTools connection closed")
            data += part
        return bytes(data)

    def send(self, text: str) -> None:
        payload = text.encode()
        head = bytearray([0x81])
        n = len(payload)
        if n < 126:
            head.append(0x80 | n)
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        head += mask
        self.sock.sendall(bytes(head) + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def recv(self) -> str:
        message = bytearray()
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            payload = self._exact(n)
            opcode = b0 & 0x0F
            if opcode == 0x8:
                raise ConnectionError("DevTools connection closed")
            if opcode in (0x9, 0xA):
                continue
            message += payload
            if b0 & 0x80:
                return message.decode()


class Browser:
    """One headless Chromium with one page; use as a context manager."""

    def __init__(self, width: int = 1280, height: int = 900, timeout: float = 60.0):
        exe = chromium()
        if exe is None:
            raise RuntimeError("Chromium is not installed")
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="fairprobe-chromium-")
        self.proc = subprocess.Popen(
            [
                exe,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                # no network of its own: no QUIC probes, first-run, component or sync traffic, which
                # can stall start-up on a machine without internet
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--remote-debugging-port=0",
                f"--user-data-dir={self._profile}",
                f"--window-size={width},{height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        port = None
        deadline = time.monotonic() + timeout
        while port is None and time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line and self.proc.poll() is not None:
                raise RuntimeError("Chromium exited before it listened for DevTools")
            m = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if m:
                port = int(m.group(1))
        if port is None:
            self.close()
            raise RuntimeError("Chromium did not start in time")
        # keep reading its log so a full pipe never blocks the browser
        threading.Thread(target=self.proc.stderr.read, daemon=True).start()
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=timeout))
        page = next(t for t in targets if t.get("type") == "page")
        self.ws = _WebSocket(page["webSocketDebuggerUrl"], timeout)
        self._id = 0
        self.events: list[dict[str, Any]] = []
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self._id += 1
        mid = self._id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == mid:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, name: str) -> dict[str, Any]:
        for i, e in enumerate(self.events):
            if e["method"] == name:
                return self.events.pop(i)
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("method") == name:
                return msg
            if "method" in msg:
                self.events.append(msg)

    def open(self, path: Path) -> float:
        """Load ``path`` and wait for its load event; returns the seconds it took."""
        self.events.clear()
        start = time.perf_counter()
        self.call("Page.navigate", url=path.resolve().as_uri())
        self.wait_event("Page.loadEventFired")
        return time.perf_counter() - start

    def eval(self, expression: str) -> Any:
        """The value of a JavaScript expression (promises are awaited)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"JavaScript error: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30.0) -> Any:
        """Poll ``expression`` until it is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.eval(expression)
            if value:
                return value
            time.sleep(0.05)
        raise TimeoutError(expression)

    def screenshot(self, out: Path, selector: str | None = None, max_height: int = 1600) -> None:
        """A PNG of the page, or of the element ``selector`` (top ``max_height`` pixels of it)."""
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": True}
        if selector:
            box = self.eval(
                f"(function(){{var r=document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
                "return [r.left+window.scrollX, r.top+window.scrollY, r.width, r.height];})()"
            )
            params["clip"] = {
                "x": box[0],
                "y": box[1],
                "width": box[2],
                "height": min(box[3], max_height),
                "scale": 1,
            }
        data = self.call("Page.captureScreenshot", **params)["data"]
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
