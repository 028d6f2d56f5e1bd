#!/usr/bin/env python3
"""Cuts nvidia-smi samples into the bench's rows.

Usage: gpu-samples.py SAMPLES.csv BENCH.log

SAMPLES.csv: `nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu
--format=csv,noheader,nounits -lms 100` taken beside the run (local time).
BENCH.log: the bench's stderr, whose `ROW lib=.. mode=.. W=.. t0_ms=..
t1_ms=.. peak_rss_bytes=..` lines give each row's wall-clock window, and
whose `HOLD lib=.. mode=.. W=.. t0_ms=.. t1_ms=..` lines each call's
compute-lock hold (the porep bench's rows only).
Prints one line per row: peak device memory used during the row (MiB, and
above the idle level: the least used over the whole file), mean GPU
utilisation over the row (nvidia-smi's share of time a kernel ran), the
mean utilisation within the row's compute-lock holds, and the row's peak
host RSS.

Within a hold only the samples from SETTLE_MS (default 400) after its
start count: nvidia-smi's utilisation is the share over its own last sample
period (1/6 s to 1 s by product; on the H100 its value changes every
~200 ms, so a sample reports a period that ended up to ~200 ms before it),
and an earlier sample may cover time before the hold.
"""
import os
import re
import sys
import time
from datetime import datetime


def samples(path):
    out = []
    for line in open(path):
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 3:
            continue
        try:
            stamp = datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f")
            t_ms = time.mktime(stamp.timetuple()) * 1000 + stamp.microsecond / 1000
            out.append((t_ms, int(parts[1]), int(parts[2])))
        except ValueError:
            continue
    return out


def main():
    s = samples(sys.argv[1])
    if not s:
        print("gpu-samples: no samples")
        return
    idle = min(m for _, m, _ in s)
    row = re.compile(r"ROW lib=(\S+) mode=(.+) W=(\d+) t0_ms=(\d+) t1_ms=(\d+) peak_rss_bytes=(\d+)")
    hold = re.compile(r"HOLD lib=(\S+) mode=(.+) W=(\d+) t0_ms=(\d+) t1_ms=(\d+)$")
    settle = max(0, int(os.environ.get("SETTLE_MS", "400")))
    lines = open(sys.argv[2], errors="replace").read().splitlines()
    holds = []
    for line in lines:
        m = hold.search(line)
        if m:
            holds.append((m.group(1), m.group(2), m.group(3), int(m.group(4)), int(m.group(5))))
    print(f"GPU samples: {len(s)}, idle memory used {idle} MiB")
    print(f"| library | mode | W | peak VRAM used MiB (above idle) | mean GPU utilisation | within the compute holds (samples from {settle} ms in) | peak host RSS GiB |")
    print("|---|---|---|---|---|---|---|")
    for line in lines:
        m = row.search(line)
        if not m:
            continue
        lib, mode, w, t0, t1, rss = m.groups()
        t0, t1 = int(t0), int(t1)
        inside = [x for x in s if t0 <= x[0] <= t1]
        mine = [(h0, h1) for (hl, hm, hw, h0, h1) in holds if (hl, hm, hw) == (lib, mode, w) and t0 <= h0 <= t1]
        held = [x for x in s if any(h0 + settle <= x[0] <= h1 for h0, h1 in mine)]
        in_holds = f"{sum(x[2] for x in held) / len(held):.0f}% ({len(held)} samples, {len(mine)} holds)" if held else ("no sample" if mine else "–")
        if not inside:
            print(f"| {lib} | {mode} | {w} | no sample | no sample | {in_holds} | {int(rss) / 2**30:.1f} |")
            continue
        peak = max(x[1] for x in inside)
        util = sum(x[2] for x in inside) / len(inside)
        print(f"| {lib} | {mode} | {w} | {peak} ({peak - idle}) | {util:.0f}% | {in_holds} | {int(rss) / 2**30:.1f} |")


main()
