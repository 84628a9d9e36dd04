#!/usr/bin/python3
# HTA-style analysis of one Kineto trace, for timing beside `perfgap analyze kineto`
# (bench/profiles/run.sh --kineto). Written here from the definitions HTA (Holistic Trace
# Analysis) documents, not from its code, in its style: json.load -> DataFrame -> merge/groupby.
#   comm/compute overlap per iteration = time computing while communicating / time communicating
#   GPU idle per iteration = the iteration's GPU span minus the union of its GPU activity
# Iterations are ProfilerStep#N annotations; a GPU activity belongs to the step in which its
# launch call (cuda_runtime, joined on args.correlation) began.
#   /usr/bin/python3 bench/profiles/hta_style.py TRACE.json[.gz]
# pandas is a benchmark-only dependency (Debian python3-pandas), never a runtime one.
import gzip
import json
import sys

import numpy as np
import pandas as pd


def union_ns(starts, ends):
    """Total length of the union of [start, end) intervals."""
    if len(starts) == 0:
        return 0
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    # A new merged interval begins where the start lies past everything before it.
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    new[1:] = s[1:] > reach[:-1]
    group = np.cumsum(new)
    g = pd.DataFrame({"s": s, "e": reach, "g": group}).groupby("g").agg(s=("s", "first"), e=("e", "max"))
    return int((g["e"] - g["s"]).sum())


def overlap_ns(a, b):
    """Length of union(a) intersected with union(b) (a, b: DataFrames with start, end)."""
    ev = pd.concat([
        pd.DataFrame({"t": a["start"], "da": 1, "db": 0}), pd.DataFrame({"t": a["end"], "da": -1, "db": 0}),
        pd.DataFrame({"t": b["start"], "da": 0, "db": 1}), pd.DataFrame({"t": b["end"], "da": 0, "db": -1}),
    ]).groupby("t", sort=True).sum()
    ca, cb = ev["da"].cumsum(), ev["db"].cumsum()
    t = ev.index.to_numpy()
    both = ((ca > 0) & (cb > 0)).to_numpy()[:-1]
    return int((np.diff(t) * both).sum())


def main(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        trace = json.load(f)
    df = pd.DataFrame(trace["traceEvents"])
    df = df[df["ph"] == "X"]
    args = pd.json_normalize(df["args"].where(df["args"].notna(), {}).tolist())
    args.index = df.index
    df = df.assign(correlation=args.get("correlation"), ts_ns=(df["ts"] * 1000).round().astype("int64"),
                   dur_ns=(df["dur"] * 1000).round().astype("int64"))
    df["end_ns"] = df["ts_ns"] + df["dur_ns"]

    gpu = df[df["cat"].isin(["kernel", "gpu_memcpy", "gpu_memset"])][["cat", "name", "ts_ns", "end_ns", "correlation"]]
    runtime = df[df["cat"].isin(["cuda_runtime", "cuda_driver"])][["ts_ns", "correlation"]].rename(columns={"ts_ns": "launch_ns"})
    steps = df[(df["cat"] == "user_annotation") & df["name"].str.startswith("ProfilerStep#")][["name", "ts_ns", "end_ns"]]
    steps = steps.rename(columns={"name": "step", "ts_ns": "step_start", "end_ns": "step_end"}).sort_values("step_start")

    # Each GPU activity to its launch call, then to the step whose range holds that call.
    gpu = gpu.merge(runtime, on="correlation", how="inner").sort_values("launch_ns")
    gpu = pd.merge_asof(gpu, steps, left_on="launch_ns", right_on="step_start", direction="backward")
    gpu = gpu[gpu["launch_ns"] < gpu["step_end"]]
    gpu["comm"] = (gpu["cat"] == "kernel") & gpu["name"].str.startswith("nccl")
    gpu["comp"] = (gpu["cat"] == "kernel") & ~gpu["comm"]

    rows = []
    for step, g in gpu.groupby("step", sort=False):
        span = int(g["end_ns"].max() - g["ts_ns"].min())
        busy = union_ns(g["ts_ns"].to_numpy(), g["end_ns"].to_numpy())
        comm = g[g["comm"]].rename(columns={"ts_ns": "start", "end_ns": "end"})
        comp = g[g["comp"]].rename(columns={"ts_ns": "start", "end_ns": "end"})
        comm_ns = union_ns(comm["start"].to_numpy(), comm["end"].to_numpy())
        both = overlap_ns(comm, comp) if comm_ns else 0
        rows.append({"step": step, "span_ms": span / 1e6, "comm_ms": comm_ns / 1e6,
                     "overlap_pct": 100.0 * both / comm_ns if comm_ns else float("nan"),
                     "idle_ms": (span - busy) / 1e6, "idle_pct": 100.0 * (span - busy) / span if span else 0.0})
    out = pd.DataFrame(rows)
    summary = {
        "events": int(len(trace["traceEvents"])), "gpu_activities": int(len(gpu)), "iterations": int(len(out)),
        "comm_ms_per_iter": float(out["comm_ms"].mean()), "overlap_pct": float(out["overlap_pct"].mean()),
        "idle_pct": float(out["idle_pct"].mean()),
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: hta_style.py TRACE.json[.gz]")
    main(sys.argv[1])
