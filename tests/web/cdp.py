"""Headless Chromium driven through its DevTools protocol, with the standard library only.

Debian 12 packages no Python DevTools client, so this holds the few pieces the web tests need: a
WebSocket client (RFC 6455, text frames, client masking), a page session that sends commands and
keeps the events it receives, and helpers to open a page with the network off, run JavaScript in
it, print it and take a screenshot. `Browser.find()` returns None where Chromium is absent (the
tests then exit 77).
"""
import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import time
import urllib.request


class WebSocket:
    def __init__(self, url, timeout=60):
        m = re.match(r"ws://([^/:]+):(\d+)(/.*)", url)
        if not m:
            raise ValueError(f"not a ws:// URL: {url}")
        host, port, path = m.group(1), int(m.group(2)), m.group(3)
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError(f"{url}: closed during the WebSocket handshake")
            head += chunk
        head, self.buf = head.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise ConnectionError(f"{url}: handshake refused: {head.splitlines()[0]!r}")

    def send(self, text):
        data, mask = text.encode(), os.urandom(4)
        n = len(data)
        head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n)
                                if n < 65536 else bytes([0x80 | 127]) + struct.pack(">Q", n))
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
        self.sock.sendall(head + mask + masked)

    def _read(self, n):
        parts, have = [self.buf], len(self.buf)
        while have < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise ConnectionError("the browser closed the DevTools connection")
            parts.append(chunk)
            have += len(chunk)
        data = b"".join(parts)
        self.buf = data[n:]
        return data[:n]

    def recv(self):
        message = b""
        while True:
            b0, b1 = self._read(2)
            op, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            payload = self._read(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            if op == 0x8:
                raise ConnectionError("the browser closed the DevTools connection")
            if op in (0x9, 0xA):  # ping, pong: not part of a message
                continue
            message += payload
            if b0 & 0x80:
                return message.decode()


class Browser:
    """One headless Chromium with one page; commands go to that page's DevTools session."""

    @staticmethod
    def find():
        for name in ("chromium", "chromium-browser", "google-chrome"):
            path = shutil.which(name)
            if path:
                return path
        return None

    def __init__(self, exe, profile_dir, width=1200, height=900):
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--metrics-recording-only", "--remote-debugging-port=0",
             # Nothing should leave the page; if something tried, it would meet a dead proxy.
             "--proxy-server=127.0.0.1:9", f"--user-data-dir={profile_dir}", f"--window-size={width},{height}",
             "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port, lines, deadline = None, [], time.time() + 60
        while time.time() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            lines.append(line)
            m = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if m:
                port = int(m.group(1))
                break
        if port is None:
            self.close()
            raise RuntimeError("chromium did not start its DevTools server; it said:\n" + "".join(lines[-20:]))
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30))
        page = next(t for t in targets if t.get("type") == "page")
        self.ws = WebSocket(page["webSocketDebuggerUrl"])
        self.next_id, self.events = 0, []

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, method, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for i, e in enumerate(self.events):
                if e["method"] == method:
                    return self.events.pop(i)
            msg = json.loads(self.ws.recv())
            if "method" in msg:
                self.events.append(msg)
        raise TimeoutError(f"no {method} within {timeout} s")

    def open_offline(self, path):
        """Opens a local file with the network emulated off; returns the URLs the page requested."""
        self.call("Network.enable")
        self.call("Network.emulateNetworkConditions", offline=True, latency=0, downloadThroughput=-1,
                  uploadThroughput=-1)
        self.call("Page.enable")
        self.call("Runtime.enable")
        # Every Content-Security-Policy violation on the page is counted: a kit page has none.
        self.call("Page.addScriptToEvaluateOnNewDocument", source=(
            "window.__violations = [];"
            "document.addEventListener('securitypolicyviolation', function (e) {"
            " window.__violations.push(e.violatedDirective + ' ' + e.blockedURI); });"))
        self.events.clear()
        url = "file://" + os.path.abspath(path)
        self.call("Page.navigate", url=url)
        self.wait_event("Page.loadEventFired")
        return [e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"]

    def js(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"JavaScript failed: {r['exceptionDetails'].get('exception', r['exceptionDetails'])}")
        return r["result"].get("value")

    def screenshot(self, file, width=1200):
        self.call("Emulation.clearDeviceMetricsOverride")  # the last page's height must not stay
        height = int(self.js("Math.ceil(document.documentElement.scrollHeight)"))
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=min(height, 6000), deviceScaleFactor=1,
                  mobile=False)
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        with open(file, "wb") as f:
            f.write(base64.b64decode(data))

    def pdf(self):
        return base64.b64decode(self.call("Page.printToPDF", printBackground=False)["data"])

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
