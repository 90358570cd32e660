#!/usr/bin/python3
"""Paired wall-clock runs of psdlearn and the Python baseline on letters.

Runs `psdlearn train` and bench/python/letters_protocol.py alternately,
RUNS times each, for one algorithm, and prints each pair's wall seconds,
both medians and their ratio, and the test errors. The whole command is
timed, interpreter start-up and imports included, as a user would see it.

  go build -o /tmp/psdlearn ./cmd/psdlearn
  /usr/bin/python3 bench/python/paired.py --psdlearn /tmp/psdlearn --algo boostmetric
  /usr/bin/python3 bench/python/paired.py --psdlearn /tmp/psdlearn --algo frobmetric --C 100
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(cmd):
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - t0, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--psdlearn", required=True)
    ap.add_argument("--algo", choices=["boostmetric", "frobmetric"], required=True)
    ap.add_argument("--C", type=float, default=100)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    go = [a.psdlearn, "train", "--algo", a.algo, "--data", "builtin:letters",
          "--split", "rows:10500,4500,5000", "--standardize", "--json", "--quiet"]
    py = [sys.executable, os.path.join(HERE, "letters_protocol.py"), "--algo", a.algo]
    if a.algo == "frobmetric":
        go += ["--C", repr(a.C)]
        py += ["--C", repr(a.C)]
    tg, tp, eg, ep = [], [], None, None
    for r in range(a.runs):
        t, out = timed(go)
        tg.append(t)
        eg = json.loads(out)["test_error"]
        t, out = timed(py)
        tp.append(t)
        ep = json.loads(out.strip().splitlines()[-1]).get(a.algo + "_test_error")
        print(f"pair {r + 1}: psdlearn {tg[-1]:.2f} s, python {tp[-1]:.2f} s, ratio {tp[-1] / tg[-1]:.2f}", flush=True)
    mg, mp = statistics.median(tg), statistics.median(tp)
    print(json.dumps({"algo": a.algo, "psdlearn_s": tg, "python_s": tp, "psdlearn_median_s": mg,
                      "python_median_s": mp, "ratio_of_medians": mp / mg,
                      "psdlearn_test_error": eg, "python_test_error": ep}))


if __name__ == "__main__":
    main()
