#!/usr/bin/env python3
"""bench/loadtest --plot-only (issue 18): the capacity curve drawn from a small capacity table, without
running a load test. The fixture has rows of both formats the table has had (18 and 19 columns), two runs,
a thin one, one through the TUN wire (a run of its own) and an "n/a"; the PNG must be a real one (signature, an IHDR of a sensible size, every chunk's
CRC right) and the output must count the rows and runs. A table with no row is an error, not an empty
picture. Exit 77 (skipped) when no python3 here has matplotlib (scripts/setup installs
python3-matplotlib)."""

import os
import struct
import subprocess
import sys
import tempfile
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOADTEST = os.path.join(ROOT, "bench", "loadtest")

FIXTURE = """# Results

<!-- loadtest:begin -->
| date (UTC) | clients | transport | NPCs | tick p50 ms | tick p99 ms | overruns | CPU/tick ms | server CPU % (main, sys) | snapshot B | out/client kB/s | latency p99 ms | desyncs | ticks min | failures | bots CPU % | load | goal |
|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|
| 2026-11-21 22:22 | 50 | TCP | 2000 | 0.80 | 3.84 (<= 4.0) | 0 | 1.19 | 4 (3, 3) | 457 | 13.7 | 4.67 | 0 | 0.999 | 0 | 11 | 2.85 | yes |
| 2026-11-21 22:23 | 100 | TCP | 2000 | 0.84 | 6.20 (<= 8.0) | 0 | 2.37 | 7 (7, 5) | 349 | 10.5 | n/a | 0 | 0.999 | 0 | 23 | 2.59 | yes |
| 2026-11-25 03:41 | 100 | UDP | 10000 (r 160 m) | 3.65 | 7.90 (<= 8.0) | 0 | 5.58 | 17 (16, 2) | 66 | 3.6 | 8.38 | 0 | 0.999 | 0 | 29 | 1.85 | yes | 55.8 |
| 2026-11-25 03:42 | 250 | UDP | 10000 (r 160 m) | 6.23 | 15.22 (<= 16.0) | 0 | 10.01 | 30 (30, 5) | 52 | 3.0 | 12.99 | 0 | 0.999 | 0 | 55 | 1.36 | no: tick p99 | 40.0 |
| 2026-11-25 03:45 | 500 thin | UDP | 10000 (r 160 m) | 12.16 | 27.95 (<= 32.0) | 0 | 16.38 | 49 (49, 8) | 67 | 3.3 | 15.87 | 0 | 0.999 | 0 | 47 | 1.03 | no: tick p99 | 32.8 |
| 2026-11-28 15:14 | 1000 thin | UDP OVER TUN | 10000 (r 160 m) | 17.94 | 31.50 (<= 33.3) | 6 | 23.83 | 71 (55, 14) | 39 | 2.0 | 39.17 | 0 | 0.995 | 0 | 57 | 1.40 | no: tick p99 | 23.8 |
<!-- loadtest:end -->
"""

EMPTY = "<!-- loadtest:begin -->\n| date (UTC) | clients |\n|---|---:|\n<!-- loadtest:end -->\n"


def has_matplotlib(python):
    return subprocess.run([python, "-c", "import matplotlib"], capture_output=True, timeout=60).returncode == 0


def check_png(path):
    with open(path, "rb") as f:
        data = f.read()
    assert len(data) > 0, "empty PNG"
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"not a PNG: {data[:8]!r}"
    offset, chunks = 8, []
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        body = data[offset + 8:offset + 8 + length]
        (crc,) = struct.unpack(">I", data[offset + 8 + length:offset + 12 + length])
        assert zlib.crc32(kind + body) == crc, f"bad CRC in chunk {kind!r}"
        chunks.append((kind, body))
        offset += 12 + length
    assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND", [k for k, _ in chunks]
    width, height = struct.unpack(">II", chunks[0][1][:8])
    assert 400 <= width <= 4000 and 300 <= height <= 4000, (width, height)
    return len(data), width, height


def main():
    if not (has_matplotlib(sys.executable) or (os.access("/usr/bin/python3", os.X_OK)
                                               and has_matplotlib("/usr/bin/python3"))):
        print("skipped: no python3 with matplotlib (scripts/setup installs python3-matplotlib)")
        return 77
    with tempfile.TemporaryDirectory(prefix="ecsnet-loadtest-plot-") as tmp:
        table = os.path.join(tmp, "RESULTS.md")
        with open(table, "w") as f:
            f.write(FIXTURE)
        png = os.path.join(tmp, "out", "capacity.png")
        done = subprocess.run([sys.executable, LOADTEST, "--plot-only", "--results", table, "--plot", png],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "6 rows in 4 run(s)" in done.stdout, done.stdout
        size, width, height = check_png(png)
        print(f"capacity.png: {size} bytes, {width} x {height}")

        # The newest run only.
        done = subprocess.run([sys.executable, LOADTEST, "--plot-only", "--results", table, "--plot", png,
                               "--last-runs", "1"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and "1 rows in 1 run(s)" in done.stdout, done.stdout + done.stderr
        check_png(png)

        # Nothing to draw: an error, and no picture.
        with open(table, "w") as f:
            f.write(EMPTY)
        empty_png = os.path.join(tmp, "empty.png")
        done = subprocess.run([sys.executable, LOADTEST, "--plot-only", "--results", table, "--plot", empty_png],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode != 0 and "no row to plot" in done.stderr, done.stdout + done.stderr
        assert not os.path.exists(empty_png)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
