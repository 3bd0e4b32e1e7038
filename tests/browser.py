"""A headless Chromium driven over the DevTools protocol through a pipe (--remote-debugging-pipe):
stdlib only, no driver binary, no network. Used by the HTML report tests.

    with Browser.launch() as b:
        page = b.open("file:///…/report.html")     # waits for the load event
        page.eval("document.title")
        page.errors                                 # console errors and uncaught exceptions
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def find_chromium() -> str | None:
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


class BrowserError(RuntimeError):
    pass


class Browser:
    def __init__(self, proc: subprocess.Popen, to_browser: int, from_browser: int, profile: str) -> None:
        self.proc, self.out, self.inp, self.profile = proc, to_browser, from_browser, profile
        self.next_id = 0
        self.buffer = b""
        self.events: list[dict[str, Any]] = []

    @classmethod
    def launch(cls, executable: str | None = None) -> Browser:
        exe = executable or find_chromium()
        if exe is None:
            raise BrowserError("no Chromium found (apt-get install chromium)")
        a_read, a_write = os.pipe()  # we write commands -> the browser's fd 3
        b_read, b_write = os.pipe()  # the browser's fd 4 -> we read replies and events
        profile = tempfile.mkdtemp(prefix="profconv-chromium-")

        def child_fds() -> None:  # runs in the child before it closes the fds it does not keep
            r, w = os.dup(a_read), os.dup(b_write)  # out of the way of 3 and 4 first
            os.dup2(r, 3)
            os.dup2(w, 4)

        argv = [exe, "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
                "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check", "--mute-audio",
                "--disable-extensions", "--disable-background-networking", "--disable-component-update",
                f"--user-data-dir={profile}", "--window-size=1280,2000", "about:blank"]
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                preexec_fn=child_fds, pass_fds=(3, 4))
        os.close(a_read)
        os.close(b_write)
        return cls(proc, a_write, b_read, profile)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.out, self.inp):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrowserError("timed out waiting for the browser")
            ready, _, _ = select.select([self.inp], [], [], left)
            if ready:
                chunk = os.read(self.inp, 1 << 20)
                if not chunk:
                    raise BrowserError("the browser closed its pipe")
                self.buffer += chunk
        raw, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float = 30) -> dict[str, Any]:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.out, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str, session: str, timeout: float = 30) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        for ev in self.events:
            if ev.get("method") == method and ev.get("sessionId") == session:
                return ev
        while True:
            ev = self._read_message(deadline)
            self.events.append(ev)
            if ev.get("method") == method and ev.get("sessionId") == session:
                return ev

    def open(self, url: str, width: int = 1280, height: int = 2000) -> Page:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", session=session)
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                         "mobile": False}, session=session)
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_event("Page.loadEventFired", session)
        return Page(self, session)


class Page:
    def __init__(self, browser: Browser, session: str) -> None:
        self.browser, self.session = browser, session

    def eval(self, expression: str) -> Any:
        res = self.browser.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                     "awaitPromise": True}, session=self.session)
        if "exceptionDetails" in res:
            raise BrowserError(f"{expression}: {res['exceptionDetails'].get('text')}")
        return res["result"].get("value")

    @property
    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries (failed loads) of this page."""
        out = []
        for ev in self.browser.events:
            if ev.get("sessionId") != self.session:
                continue
            p = ev.get("params", {})
            if ev.get("method") == "Runtime.exceptionThrown":
                out.append(p.get("exceptionDetails", {}).get("text", "exception"))
            elif ev.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description"))) for a in p.get("args", [])))
            elif ev.get("method") == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(p["entry"].get("text", "error"))
        return out

    def screenshot(self, path: Path, full_page: bool = True) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
            size = self.eval("[document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            params["clip"] = {"x": 0, "y": 0, "width": size[0], "height": min(size[1], 16000), "scale": 1}
        data = self.browser.send("Page.captureScreenshot", params, session=self.session)["data"]
        path.write_bytes(base64.b64decode(data))
        return path
