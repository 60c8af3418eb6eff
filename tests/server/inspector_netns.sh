#!/usr/bin/env bash
# The admin endpoint's access rules for a peer that is NOT loopback, for real: in a private network
# namespace (unshare -n, root), 10.77.0.1 is added to `lo` and the admin port listens there; requests come
# from 10.77.0.1, a non-loopback address, and never leave the namespace.
#   without --admin-token: /healthz and /metrics answer (200), /api/ and /inspector are refused (403)
#   with it: no token or a wrong one 401, the bearer token or ?access_token= 200
# Exits 77 (skipped, saying why) where a network namespace cannot be made (not root, a container).
# Usage: inspector_netns.sh SERVER_BINARY
set -euo pipefail
server=${1:?usage: inspector_netns.sh SERVER_BINARY}

if [[ "${ECSNET_IN_NETNS:-}" != 1 ]]; then
    if ! unshare -n true 2>/dev/null; then
        echo "SKIP: cannot make a network namespace here (unshare -n needs root and a permissive sandbox)"
        exit 77
    fi
    exec env ECSNET_IN_NETNS=1 unshare -n bash "$0" "$@"
fi

ip link set lo up
ip addr add 10.77.0.1/32 dev lo
work=$(mktemp -d)
pid=""
cleanup() {
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        wait "$pid" || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

failures=0
start_server() { # extra flags...
    # Made here, not by the redirection below: that one runs in the background child, which a loaded machine
    # may not have scheduled before the first read (a CI run's sed found no file, and `set -e` ended the test).
    : >"$work/log"
    "$server" --insecure-dev --bind 127.0.0.1 --port 0 --admin-address 10.77.0.1 --admin-port 0 --npcs 100 \
        "$@" >"$work/log" 2>&1 &
    pid=$!
    admin=""
    for _ in $(seq 100); do
        admin=$(sed -n 's/.* on 10\.77\.0\.1:\([0-9]*\); tick.*/\1/p' "$work/log")
        [[ -n "$admin" ]] && break
        sleep 0.05
    done
    [[ -n "$admin" ]] || { echo "FAIL: the server did not start"; cat "$work/log"; exit 1; }
}
stop_server() {
    kill -TERM "$pid"
    wait "$pid" || true
    pid=""
}
expect() { # status path [curl args...]
    local want=$1 path=$2
    shift 2
    local got
    got=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@" "http://10.77.0.1:$admin$path")
    if [[ "$got" != "$want" ]]; then
        echo "FAIL: $path ${*:-} answered $got, expected $want"
        failures=$((failures + 1))
    fi
}

start_server
expect 200 /healthz
expect 200 /metrics
expect 403 /api/world
expect 403 /inspector/
expect 403 /api/world -H "Authorization: Bearer some-token-of-sixteen"
stop_server

token=inspector-netns-token-0123456789
ECSNET_ADMIN_TOKEN=$token start_server
expect 200 /healthz
expect 401 /api/world
expect 401 /api/world -H "Authorization: Bearer wrong-token-0123456789"
expect 401 "/api/world?access_token=wrong"
expect 200 /api/world -H "Authorization: Bearer $token"
expect 200 "/api/world?access_token=$token"
expect 200 "/inspector/?access_token=$token"
expect 405 /api/world -X POST -H "Authorization: Bearer $token"
stop_server

if ((failures > 0)); then
    exit 1
fi
echo "inspector access from a non-loopback peer: ok"
