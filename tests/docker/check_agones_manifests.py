#!/usr/bin/env python3
"""Keeps docker/agones/ (GameServer, Fleet, FleetAutoscaler) in step with ecsnet-server and the image.

Usage: check_agones_manifests.py REPOSITORY_ROOT ECSNET_SERVER_BINARY

Checks that every flag the manifests pass exists (`ecsnet-server --help`), that the ports, the user, the
key file and the admin/health port agree with docker/Dockerfile, that the health settings leave room for the
server's pings, that the players List's capacity is --max-clients, that the grace period exceeds the drain,
that the CPU request covers what bench/RESULTS.md measured, and that the Fleet's template is the GameServer.
"""

import re
import subprocess
import sys
from pathlib import Path

import yaml

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def load(path):
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def flag_values(args):
    """--flag value pairs (None for a bare flag) of a container's args."""
    values = {}
    i = 0
    while i < len(args):
        arg = str(args[i])
        if arg.startswith("--"):
            if i + 1 < len(args) and not str(args[i + 1]).startswith("--"):
                values[arg] = str(args[i + 1])
                i += 2
                continue
            values[arg] = None
        i += 1
    return values


def millicores(quantity):
    text = str(quantity)
    return float(text[:-1]) if text.endswith("m") else float(text) * 1000.0


def mebibytes(quantity):
    units = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024}
    for suffix, factor in units.items():
        if str(quantity).endswith(suffix):
            return float(str(quantity)[: -len(suffix)]) * factor
    return float(quantity) / (1024 * 1024)


def measured_cpu(results_text):
    """(fixed ms per tick, largest us per client per tick) of RESULTS.md's capacity with interest management."""
    section = results_text.split("### Capacity with interest management", 1)[1]
    section = section.split("\n## ", 1)[0]
    per_client = [float(m) for m in re.findall(r"\|\s*([\d.]+) us\s*\|", section)]
    fixed = re.search(r"fixed cost of a tick\s*\([^)]*\)\s*about\s*([\d.]+)\s*ms", " ".join(section.split()))
    if not per_client or not fixed:
        raise SystemExit("check_agones_manifests: bench/RESULTS.md no longer has the CPU figures the sizing uses")
    return float(fixed.group(1)), max(per_client)


def main():
    root = Path(sys.argv[1])
    server = sys.argv[2]
    manifests = root / "docker" / "agones"
    game_server = load(manifests / "gameserver.yaml")
    fleet = load(manifests / "fleet.yaml")
    autoscaler = load(manifests / "fleetautoscaler.yaml")
    dockerfile = (root / "docker" / "Dockerfile").read_text(encoding="utf-8")
    results = (root / "bench" / "RESULTS.md").read_text(encoding="utf-8")
    help_text = subprocess.run([server, "--help"], capture_output=True, text=True, check=True).stdout
    server_flags = set(re.findall(r"(--[a-z][a-z0-9-]*)", help_text))

    # Kinds, and the three agreeing with each other.
    check(game_server["apiVersion"] == "agones.dev/v1" and game_server["kind"] == "GameServer",
          "gameserver.yaml is not an agones.dev/v1 GameServer")
    check(fleet["apiVersion"] == "agones.dev/v1" and fleet["kind"] == "Fleet", "fleet.yaml is not a Fleet")
    check(autoscaler["apiVersion"] == "autoscaling.agones.dev/v1" and autoscaler["kind"] == "FleetAutoscaler",
          "fleetautoscaler.yaml is not a FleetAutoscaler")
    check(fleet["spec"]["template"]["spec"] == game_server["spec"],
          "the Fleet's template spec differs from the GameServer's spec")
    check(fleet["spec"]["template"]["metadata"].get("labels") == game_server["metadata"].get("labels"),
          "the Fleet's template labels differ from the GameServer's")
    check(autoscaler["spec"]["fleetName"] == fleet["metadata"]["name"],
          "the FleetAutoscaler scales another Fleet than fleet.yaml's")
    policy = autoscaler["spec"]["policy"]
    check(policy["type"] == "Buffer", "the FleetAutoscaler's policy is not Buffer")
    buffer = policy.get("buffer", {})
    check(0 < int(buffer.get("bufferSize", 0)) <= int(buffer.get("minReplicas", 0)) <= int(buffer.get("maxReplicas", 0)),
          "the buffer policy needs 0 < bufferSize <= minReplicas <= maxReplicas")

    spec = game_server["spec"]
    pod = spec["template"]["spec"]
    containers = {c["name"]: c for c in pod["containers"]}
    check(spec.get("container") in containers, "spec.container names no container of the pod")
    container = containers.get(spec.get("container"), pod["containers"][0])
    args = [str(a) for a in container.get("args", [])]
    flags = flag_values(args)

    # Every flag exists.
    for flag in flags:
        check(flag in server_flags, f"the manifests pass {flag}, which ecsnet-server --help does not list")
    check("--agones" in flags, "the container does not run with --agones")

    # Ports: the game port on TCP and UDP as the server serves it, the admin port inside the pod.
    game_ports = spec.get("ports", [])
    check(len(game_ports) == 1, "the GameServer should declare exactly one port, the game port")
    game_port = game_ports[0] if game_ports else {}
    port = int(flags.get("--port", 7777))
    admin_port = int(flags.get("--admin-port", 7778))
    check(game_port.get("containerPort") == port, "the GameServer's containerPort is not the server's --port")
    check(game_port.get("portPolicy") == "Dynamic", "the game port's portPolicy is not Dynamic")
    expected_protocol = {"both": "TCPUDP", "tcp": "TCP", "udp": "UDP"}[flags.get("--transport", "both")]
    check(game_port.get("protocol") == expected_protocol,
          f"the game port's protocol should be {expected_protocol} for --transport {flags.get('--transport', 'both')}")
    check(admin_port != port, "the admin port is the game port")
    check(all(p.get("containerPort") != admin_port for p in game_ports), "the admin port is exposed as a game port")
    check(any(p.get("containerPort") == admin_port and "hostPort" not in p for p in container.get("ports", [])),
          "the admin port is not a container port without a host port")
    admin_address = flags.get("--admin-address", "127.0.0.1")
    check(not admin_address.startswith("127.") and admin_address not in ("::1", "localhost"),
          "the admin port listens on loopback only (--admin-address): Prometheus in the cluster cannot scrape it")
    exposed = set(re.findall(r"(\d+/(?:tcp|udp))", " ".join(re.findall(r"^EXPOSE .*$", dockerfile, re.M))))
    check({f"{port}/udp", f"{port}/tcp", f"{admin_port}/tcp"} <= exposed,
          f"docker/Dockerfile does not EXPOSE {port}/udp, {port}/tcp and {admin_port}/tcp")
    # http://127.0.0.1:PORT/healthz, or bash's /dev/tcp/127.0.0.1/PORT and a GET /healthz on it
    health_check = re.search(r"^HEALTHCHECK .*\n.*127\.0\.0\.1[:/](\d+)\b.*/healthz", dockerfile, re.M)
    check(health_check is not None and int(health_check.group(1)) == admin_port,
          "docker/Dockerfile's HEALTHCHECK does not call the manifests' --admin-port")

    # The image's user, and the key file as a secret at the path the image's CMD uses.
    uid = re.search(r"useradd[^\n]*--uid (\d+)", dockerfile)
    check(uid is not None, "docker/Dockerfile creates no user with --uid")
    security = pod.get("securityContext", {})
    check(uid is not None and security.get("runAsUser") == int(uid.group(1)),
          "the pod does not run as the image's user")
    check(security.get("runAsNonRoot") is True, "the pod does not require a non-root user")
    key_file = flags.get("--key-file")
    check(key_file is not None and '"--key-file", "' + str(key_file) + '"' in dockerfile,
          "the manifests' --key-file is not the one docker/Dockerfile's CMD reads")
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    found_key = False
    for mount in container.get("volumeMounts", []):
        volume = volumes.get(mount["name"], {})
        for item in volume.get("secret", {}).get("items", []):
            if mount["mountPath"].rstrip("/") + "/" + item["path"] == key_file:
                found_key = mount.get("readOnly") is True
    check(found_key, "no read-only Secret volume puts the key at --key-file")

    # Health: pings well inside the period, and a stalled tick noticed before Agones gives up.
    health = spec.get("health", {})
    period_ms = int(health.get("periodSeconds", 5)) * 1000
    threshold = int(health.get("failureThreshold", 3))
    ping_ms = int(flags.get("--agones-health-period-ms", 2000))
    stall_ms = int(flags.get("--agones-tick-stall-ms", 2000))
    check(not health.get("disabled", False), "Agones health checking is disabled")
    check(2 * ping_ms <= period_ms, "fewer than two health pings per GameServer health period")
    check(stall_ms + ping_ms < period_ms * threshold,
          "a stalled tick is noticed only after Agones would have marked the server Unhealthy anyway")

    # Players List capacity, grace period, resources.
    max_clients = int(flags.get("--max-clients", 1024))
    players = spec.get("lists", {}).get("players", {})
    check(int(players.get("capacity", -1)) == max_clients, "the players List's capacity is not --max-clients")
    check(0 < int(players.get("capacity", -1)) <= 1000, "a List's capacity must be within 0..1000 (Agones)")
    drain = flags.get("--drain-seconds")
    check(drain is not None, "the container does not pass --drain-seconds")
    grace = int(pod.get("terminationGracePeriodSeconds", 30))
    check(drain is None or grace >= int(drain) + 2, "terminationGracePeriodSeconds leaves no margin over the drain")
    resources = container.get("resources", {})
    requests = resources.get("requests", {})
    limits = resources.get("limits", {})
    check({"cpu", "memory"} <= set(requests) and {"cpu", "memory"} <= set(limits),
          "cpu and memory requests and limits are not all set")
    if {"cpu", "memory"} <= set(requests) and {"cpu", "memory"} <= set(limits):
        fixed_ms, per_client_us = measured_cpu(results)
        tick_rate = int(flags.get("--tick-rate", 30))
        needed = tick_rate * (fixed_ms + per_client_us * max_clients / 1000.0)  # ms of CPU per s = millicores
        check(millicores(requests["cpu"]) >= needed,
              f"the CPU request {requests['cpu']} is below what RESULTS.md measured: {needed:.0f}m")
        check(millicores(limits["cpu"]) >= millicores(requests["cpu"]), "the CPU limit is below the request")
        check(mebibytes(limits["memory"]) >= mebibytes(requests["memory"]), "the memory limit is below the request")

    if failures:
        for failure in failures:
            print("check_agones_manifests: " + failure, file=sys.stderr)
        return 1
    print("check_agones_manifests: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
