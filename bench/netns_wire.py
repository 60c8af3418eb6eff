"""Two network namespaces joined by build/bench/tun_wire (bench/tun_wire.cpp), for the benchmarks that put the
kernel's network path between a server and its clients: bench/transport_compare (with loss and delay) and
bench/loadtest --wire tun (with none). The server's namespace has 10.9.0.1, the clients' 10.9.0.2, each on a
TUN device ecsnet0 the wire holds. Root only. close() stops the wire and deletes the namespaces, whatever
ended the run; the wire also dies with the script that started it."""

import contextlib
import ctypes
import json
import os
import shlex
import signal
import subprocess
import time

SERVER_ADDRESS, CLIENT_ADDRESS = "10.9.0.1", "10.9.0.2"
DEVICE = "ecsnet0"


def die_with_parent():
    """preexec_fn: the child gets SIGTERM if this script dies, so nothing outlives it (it survives exec)."""
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_pdeathsig = 1
    libc.prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)


def run(command, timeout=15.0, check=True):
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise RuntimeError(f"{shlex.join(command)} failed ({result.returncode}): {result.stderr.strip()}")
    return result


def in_ns(netns, command):
    """`command` run inside `netns` (`ip netns exec` execs it: the process keeps its pid)."""
    return ["ip", "netns", "exec", netns] + [str(c) for c in command]


class wire_namespaces:
    def __init__(self, prefix, workdir):
        self.srv = f"{prefix}-srv"
        self.cli = f"{prefix}-cli"
        self.workdir = workdir
        self.wire = None
        self.wire_out = os.path.join(workdir, "wire.jsonl")
        self.wire_err = os.path.join(workdir, "wire.err")

    def make(self, extra_sysctls=()):
        """Fresh namespaces, loopback up, IPv6 off (a leftover of a killed run is deleted first)."""
        existing = run(["ip", "netns", "list"]).stdout.split()
        for ns in (self.srv, self.cli):
            if ns in existing:
                run(["ip", "netns", "delete", ns])
            run(["ip", "netns", "add", ns])
            run(["ip", "-n", ns, "link", "set", "lo", "up"])
            settings = ["net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"]
            run(in_ns(ns, ["sysctl", "-qw"] + settings + list(extra_sysctls)))

    def start_wire(self, wire_binary, options, txqueuelen=None):
        """Starts tun_wire between the two (`options`: its loss, delay... flags), waits for its "ready"
        line, then gives the devices their addresses and brings them up; returns the wire's command."""
        command = [wire_binary, "--netns-a", self.srv, "--netns-b", self.cli, "--dev-a", DEVICE, "--dev-b",
                   DEVICE] + [str(o) for o in options]
        with open(self.wire_out, "w") as out, open(self.wire_err, "w") as err:
            self.wire = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                         start_new_session=True, preexec_fn=die_with_parent)
        self.wait_line("ready", 0, 5.0)
        for ns, address in ((self.srv, SERVER_ADDRESS), (self.cli, CLIENT_ADDRESS)):
            run(["ip", "-n", ns, "addr", "add", f"{address}/24", "dev", DEVICE])
            up = ["ip", "-n", ns, "link", "set", DEVICE]
            if txqueuelen is not None:
                up += ["txqueuelen", str(txqueuelen)]
            run(up + ["up"])
        return command

    def lines(self):
        with open(self.wire_out) as f:
            return [json.loads(line) for line in f if line.strip().startswith("{")]

    def wait_line(self, event, after, timeout):
        """The wire's newest JSON line of `event` once there are more than `after` of them."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [line for line in self.lines() if line.get("event") == event]
            if len(found) > after:
                return found[-1]
            if self.wire.poll() is not None and event != "final":
                with open(self.wire_err) as f:
                    raise RuntimeError(f"tun_wire exited ({self.wire.returncode}): {f.read().strip()}")
            time.sleep(0.02)
        raise RuntimeError(f"tun_wire: no '{event}' line within {timeout} s")

    def stop_wire(self):
        if self.wire is not None and self.wire.poll() is None:
            self.wire.send_signal(signal.SIGTERM)
            try:
                self.wire.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.wire.kill()
                self.wire.wait()

    def delete(self):
        for ns in (self.cli, self.srv):
            with contextlib.suppress(Exception):
                if ns in run(["ip", "netns", "list"], check=False).stdout.split():
                    run(["ip", "netns", "delete", ns], check=False)

    def close(self):
        self.stop_wire()
        self.delete()
