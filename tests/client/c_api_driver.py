#!/usr/bin/env python3
"""Runs a C API test against a live ecsnet-server: starts the server on 127.0.0.1 with a free port
(--port 0, the port read from its "listening" log line), runs the test command with HOST PORT appended,
stops the server. Every wait is bounded; the test's exit status is the driver's.

  c_api_driver.py SERVER_BINARY -- COMMAND [ARGS...]
"""
import subprocess
import sys
import threading
import time

LISTENING = "listening for clients on 127.0.0.1:"
START_TIMEOUT_S = 10
TEST_TIMEOUT_S = 60
STOP_TIMEOUT_S = 5


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    server_binary, command = sys.argv[1], sys.argv[3:]
    server = subprocess.Popen(
        [server_binary, "--bind", "127.0.0.1", "--port", "0", "--admin-port", "0", "--transport", "both",
         "--insecure-dev", "--npcs", "20", "--relevancy-radius", "0", "--log-level", "info"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    port = None
    found = threading.Event()
    log = []

    def read_log() -> None:  # drains the server's output for its whole life (a full pipe would stall it)
        nonlocal port
        for line in server.stdout:
            log.append(line)
            if port is None and LISTENING in line:
                port = line.split(LISTENING, 1)[1].split()[0].strip(" ,;()")
                found.set()
        found.set()

    reader = threading.Thread(target=read_log, daemon=True)
    reader.start()
    try:
        if not found.wait(START_TIMEOUT_S) or port is None:
            print("the server did not start listening:\n" + "".join(log), file=sys.stderr)
            return 1
        started = time.monotonic()
        try:
            status = subprocess.run(command + ["127.0.0.1", port], timeout=TEST_TIMEOUT_S).returncode
        except subprocess.TimeoutExpired:
            print(f"the test ran over {TEST_TIMEOUT_S} s", file=sys.stderr)
            status = 1
        print(f"c_api_driver: {' '.join(command)} -> {status} in {time.monotonic() - started:.2f} s")
        if status != 0:
            print("server log:\n" + "".join(log[-40:]), file=sys.stderr)
        return status
    finally:
        server.terminate()
        try:
            server.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


if __name__ == "__main__":
    sys.exit(main())
