#!/usr/bin/env python3
"""Prints each benchmark's time per entity and its ratio to its floor, from Google Benchmark JSON.

    build/bench/ecs_bench --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true \
        --benchmark_format=json > out.json
    python3 bench/ratios.py out.json

Medians of the repetitions are used when present. A benchmark's floor is looked up in FLOORS by name
prefix; benchmarks without a floor are listed with their time only.
"""
import json
import sys

# benchmark name prefix -> the floor it is compared with (measured in the same binary and run)
FLOORS = {
    "BM_ViewUpdate": "BM_FloorUpdate/1000000",
    "BM_FloorUpdateHugePages": "BM_FloorUpdate/1000000",
    "BM_FloorUpdateScalar": "BM_FloorUpdate/1000000",
    "BM_GroupUpdate": "BM_FloorUpdate/1000000",
    "BM_PartialGroupUpdate": "BM_FloorUpdate/1000000",
    "BM_NonOwningGroupUpdate": "BM_FloorUpdate/1000000",
    "BM_RandomGet": "BM_FloorGather",
    "BM_SortByX": "BM_FloorStdSort",
    "BM_SortAs": "BM_FloorStdSort",
    "BM_CreateWithGroup": "BM_Create",
    "BM_DestroyManyPools/": "BM_DestroyManyPoolsProbeAll/",
    "BM_LinkTypicalTick": "BM_MemcpyTypicalTick",
    "BM_LinkFragment10k": "BM_MemcpyFragment10k",
    "BM_LinkReceiveSnapshot": "BM_MemcpySnapshot",
}


def per_entity(run):
    """Seconds per entity: the `per_entity` counter, else real time per iteration."""
    if "per_entity" in run:
        return float(run["per_entity"])
    return float(run["real_time"]) * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[run["time_unit"]]


def main(path):
    with open(path) as handle:
        report = json.load(handle)
    runs = report["benchmarks"]
    context = report.get("context", {})
    # ecs_bench records lscpu's model name; say which CPU the figures came from, and the load when run.
    print(f"CPU: {context.get('cpu_model', 'not recorded')}, {context.get('num_cpus', '?')} CPUs, "
          f"load average {context.get('load_avg', '?')}, {context.get('date', '')}")
    medians = {r["run_name"]: r for r in runs if r.get("aggregate_name") == "median"}
    if not medians:
        medians = {r["run_name"]: r for r in runs if r.get("run_type") == "iteration"}
    times = {name: per_entity(run) for name, run in medians.items()}
    print(f"{'benchmark':42} {'per entity':>12} {'floor':>34} {'ratio':>7}")
    for name, seconds in times.items():
        floor = None
        for prefix, floor_name in FLOORS.items():
            if name.startswith(prefix):
                candidate = floor_name + name[len(prefix):] if prefix.endswith("/") else floor_name
                floor = candidate if candidate in times else None
                break
        ratio = f"{seconds / times[floor]:7.2f}" if floor else ""
        print(f"{name:42} {seconds * 1e9:9.2f} ns {floor or '':>34} {ratio}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/dev/stdin")
