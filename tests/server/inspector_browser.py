#!/usr/bin/env python3
"""The inspector in a real browser: Debian's chromium, headless, driven over the DevTools protocol.

Starts a server with the demo world and one SDK client (ecsnet-bots), opens /inspector, waits for the live
map (the page sets body[data-live] after its first event), and checks what a person would see: the entity
count matches the server's, an entity clicked shows its components, the clients panel lists the connected
client, and values change over time. Saves a screenshot to <build>/inspector.png.

Usage: inspector_browser.py SERVER BOTS BUILD_DIR. Exits 0 on success, 1 on failure, 77 (skipped) when
chromium or the websocket module (python3-websocket) is missing.
"""

import json
import base64
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

try:
    import websocket
except ImportError:
    # A python3 other than Debian's (pyenv) may come first on PATH: use Debian's packages.
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        import websocket
    except ImportError:
        print("SKIP: python3-websocket is not installed (scripts/setup installs it)")
        sys.exit(77)

DEADLINE_S = 40


def fail(message):
    raise AssertionError(message)


def wait_for_line(stream, pattern, deadline, what):
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            break
        match = re.search(pattern, line)
        if match:
            return match
    fail(f"no {what} before the deadline")


def http_get(url):
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.read().decode()


class DevTools:
    def __init__(self, url):
        self.ws = websocket.create_connection(url, timeout=10)
        self.next_id = 0

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    fail(f"{method}: {message['error']}")
                return message.get("result", {})

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            fail(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_until(self, expression, seconds, what):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        fail(f"timed out waiting for {what} ({expression})")

    def click(self, selector):
        rect = self.evaluate(
            f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
            f" return [r.x + r.width / 2, r.y + r.height / 2]; }})()")
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=rect[0], y=rect[1], button="left", clickCount=1)


def metric(text, name):
    match = re.search(rf"^{name} ([0-9.e+]+)$", text, re.M)
    return float(match.group(1)) if match else None


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    server_bin, bots_bin, build_dir = sys.argv[1:]
    chromium = shutil.which("chromium")
    if chromium is None:
        print("SKIP: chromium is not installed (scripts/setup installs it)")
        return 77
    started = time.monotonic()
    deadline = started + DEADLINE_S
    processes = []
    profile = tempfile.mkdtemp(prefix="ecsnet-inspector-chromium-")
    try:
        server = subprocess.Popen(
            [server_bin, "--insecure-dev", "--bind", "127.0.0.1", "--port", "0", "--admin-port", "0",
             "--npcs", "3000", "--log-format", "text"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        processes.append(server)
        match = wait_for_line(server.stdout, r"listening for clients on 127\.0\.0\.1:(\d+) .* on 127\.0\.0\.1:(\d+)",
                              deadline, "listening line from the server")
        game_port, admin_port = match.group(1), match.group(2)
        subprocess.Popen(["cat"], stdin=server.stdout, stdout=subprocess.DEVNULL)  # keep the pipe drained
        admin = f"http://127.0.0.1:{admin_port}"

        bots = subprocess.Popen(
            [bots_bin, "--port", game_port, "--clients", "1", "--duration", "60", "--name-prefix", "inspected",
             "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        processes.append(bots)

        browser = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
             f"--user-data-dir={profile}", "--window-size=1400,1200", "--no-first-run", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        processes.append(browser)
        match = wait_for_line(browser.stderr, r"DevTools listening on (ws://127\.0\.0\.1:(\d+)/\S+)", deadline,
                              "DevTools line from chromium")
        subprocess.Popen(["cat"], stdin=browser.stderr, stdout=subprocess.DEVNULL)
        targets = json.loads(http_get(f"http://127.0.0.1:{match.group(2)}/json/list"))
        page = next(t for t in targets if t.get("type") == "page")
        tools = DevTools(page["webSocketDebuggerUrl"])
        tools.call("Page.enable")
        tools.call("Emulation.setDeviceMetricsOverride", width=1400, height=1200, deviceScaleFactor=1, mobile=False)
        tools.call("Page.navigate", url=f"{admin}/inspector")

        # The live map: the first event arrived and was drawn.
        tools.wait_until("document.body && document.body.dataset.live === '1'", 10, "the live map")
        shown = int(tools.evaluate("document.getElementById('entity-count').textContent"))
        server_entities = metric(http_get(f"{admin}/metrics"), "ecsnet_entities")
        if server_entities is None or abs(shown - server_entities) > max(10, 0.01 * server_entities):
            fail(f"the page shows {shown} entities, the server has {server_entities}")
        api_entities = json.loads(http_get(f"{admin}/api/world"))["entities"]
        if abs(shown - api_entities) > max(10, 0.01 * api_entities):
            fail(f"the page shows {shown} entities, /api/world {api_entities}")

        # The clients panel lists the SDK client.
        tools.wait_until("document.querySelector('#clients tbody').textContent.includes('inspected-0')", 10,
                         "the bot in the clients panel")

        # An entity clicked in the list shows its components.
        tools.wait_until("document.querySelectorAll('#entities li').length > 0", 5, "the entity list")
        tools.click("#entities li:nth-child(3)")
        tools.wait_until(
            "['Transform', 'Health', 'Kind'].every(c => document.querySelector("
            "`#entity-panel [data-component=\"${c}\"]`))", 5, "the entity's components")
        fields = tools.evaluate("document.querySelectorAll('#entity-panel td.real').length")
        if fields < 6:
            fail(f"the entity panel shows {fields} real values, expected the 6 fields of the arena's schema")

        # Values change over time: the tick, the client's traffic, the entity panel's tick. The client's row
        # stays the same element while its cells change (a row rebuilt between press and release loses the
        # click, which failed this test on a loaded machine).
        tools.evaluate("window.clientRow = document.querySelector('#clients tbody tr'), true")
        before = tools.evaluate(
            "[Number(document.body.dataset.tick), document.querySelector('#clients tbody').textContent,"
            " Number(document.getElementById('entity-panel').dataset.tick)]")
        time.sleep(1.5)
        after = tools.evaluate(
            "[Number(document.body.dataset.tick), document.querySelector('#clients tbody').textContent,"
            " Number(document.getElementById('entity-panel').dataset.tick)]")
        if not after[0] > before[0]:
            fail(f"the tick shown did not advance: {before[0]} then {after[0]}")
        if after[1] == before[1]:
            fail("the clients panel did not change in 1.5 s")
        if not tools.evaluate("document.querySelector('#clients tbody tr') === window.clientRow"):
            fail("the clients panel rebuilt the client's row instead of updating its cells")
        if not after[2] > before[2]:
            fail(f"the entity panel was not refreshed: tick {before[2]} then {after[2]}")
        rate = tools.evaluate("Number(document.getElementById('update-rate').textContent)")
        payload = tools.evaluate("Number(document.getElementById('payload-kb').textContent)")

        # A client clicked: its avatar is selected (the panel says whose) and its relevant area drawn.
        tools.click("#clients tbody tr")
        tools.wait_until("document.getElementById('entity-title').textContent.includes('avatar of inspected-0')",
                         5, "the client's avatar in the entity panel")
        tools.wait_until("!!document.querySelector('#entity-panel [data-component=\"Avatar\"]')", 5,
                         "the avatar's server-only Avatar component")

        # The graphs drew a few seconds (one sample a second, polled every 2 s); the screenshot is for people.
        tools.wait_until("Number(document.body.dataset.samples || 0) >= 3", 10, "the graphs' samples")
        shot = tools.call("Page.captureScreenshot", format="png")
        path = os.path.join(build_dir, "inspector.png")
        with open(path, "wb") as file:
            file.write(base64.b64decode(shot["data"]))
        print(f"inspector ok: {shown} entities, {rate} updates/s of {payload} KB, screenshot {path}, "
              f"{time.monotonic() - started:.1f} s")
        return 0
    except AssertionError as error:
        print(f"FAIL: {error}")
        return 1
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                process.send_signal(signal.SIGINT if process is not processes[-1] else signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
