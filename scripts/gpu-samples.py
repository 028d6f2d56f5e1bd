#!/usr/bin/env python3
"""Cuts nvidia-smi samples into the bench's rows.

Usage: gpu-samples.py SAMPLES.csv BENCH.log

SAMPLES.csv: `nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu
--format=csv,noheader,nounits -lms 100` taken beside the run (local time).
BENCH.log: the bench's stderr, whose `ROW lib=.. mode=.. W=.. t0_ms=..
t1_ms=.. peak_rss_bytes=..` lines give each row's wall-clock window.
Prints one line per row: peak device memory used during the row (MiB, and
above the idle level: the least used over the whole file), mean GPU
utilisation over the row (nvidia-smi's share of time a kernel ran), and the
row's peak host RSS.
"""
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
    print(f"GPU samples: {len(s)}, idle memory used {idle} MiB")
    print("| library | mode | W | peak VRAM used MiB (above idle) | mean GPU utilisation | peak host RSS GiB |")
    print("|---|---|---|---|---|---|")
    for line in open(sys.argv[2], errors="replace"):
        m = row.search(line)
        if not m:
            continue
        lib, mode, w, t0, t1, rss = m.groups()
        inside = [x for x in s if int(t0) <= x[0] <= int(t1)]
        if not inside:
            print(f"| {lib} | {mode} | {w} | no sample | no sample | {int(rss) / 2**30:.1f} |")
            continue
        peak = max(x[1] for x in inside)
        util = sum(x[2] for x in inside) / len(inside)
        print(f"| {lib} | {mode} | {w} | {peak} ({peak - idle}) | {util:.0f}% | {int(rss) / 2**30:.1f} |")


main()
