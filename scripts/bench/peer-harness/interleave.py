"""Two or more builds of `benches/peers` side by side, one forward each per round, the order
rotating: for a change measured against main on a machine whose speed moves over minutes.

    python3 scripts/bench/peer-harness/interleave.py [--settle MS] [--rows R] N ROUNDS BIN:THREADS BIN:THREADS ...

BIN is a `benches/peers` executable (copy main's aside before building the change), THREADS
its `HEADMAP_THREADS`. Prints each one's median, minimum and first quartile (ms) at N tokens
([CLS] the … [SEP]), then for each pair in the order given (1st and 2nd, 3rd and 4th, …) the
median of the second's time ÷ the first's, round by round. Never asserts a time.

--settle MS waits that long before each forward, with nothing running: every thread of the
machine is then idle when a forward starts, as between a reader's clicks, and waking one that
slept is part of the forward's time.

--rows R times a padded batch of R rows of N tokens instead of one row (the last row's final
token is PAD, so the rows run one by one, not stacked). Every BIN must know `run N ROWS`
(`benches/peers` from commit 568decd on).
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def main():
    args = sys.argv[1:]
    settle, rows = 0.0, ""
    while args[0] in ("--settle", "--rows"):
        if args[0] == "--settle":
            settle = float(args[1]) / 1e3
        else:
            rows = f" {int(args[1])}"
        args = args[2:]
    n, rounds, specs = args[0], int(args[1]), args[2:]
    ids = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump({n: [101] + [1996] * (int(n) - 2) + [102]}, ids)
    ids.close()
    procs = []
    for spec in specs:
        binary, threads = spec.rsplit(":", 1)
        env = dict(os.environ, HEADMAP_THREADS=threads)
        procs.append(subprocess.Popen([binary, "serve", ids.name], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env))

    def forward(p):
        p.stdin.write(f"run {n}{rows}\n")
        p.stdin.flush()
        return float(p.stdout.readline())

    for p in procs:
        for _ in range(3):
            forward(p)
    times = [[] for _ in procs]
    for r in range(rounds):
        for k in range(len(procs)):
            i = (r + k) % len(procs)
            time.sleep(settle)
            times[i].append(forward(procs[i]))
    for p in procs:
        p.stdin.write("quit\n")
        p.stdin.flush()
        p.wait()
    os.unlink(ids.name)
    for spec, t in zip(specs, times):
        s = sorted(t)
        print(f"{spec:40} median {statistics.median(t):8.2f}  min {s[0]:8.2f}  q1 {s[len(s) // 4]:8.2f}")
    for i in range(0, len(specs) - 1, 2):
        ratios = [b / a for a, b in zip(times[i], times[i + 1])]
        print(f"{specs[i + 1]} ÷ {specs[i]}: {statistics.median(ratios):.3f} round by round")


if __name__ == "__main__":
    main()
