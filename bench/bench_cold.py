#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench_cold.py: cold whole-process symbolization, ours next to the peers, medians of
interleaved rounds (issue 29's cold-start figure).

  bench/bench_cold.py [--build DIR] [--baseline SYMBOLCTL] [-n 100000] [--rounds 5] [FILE...]

Per FILE (default: libc's debug file from libc6-dbg and libstdc++'s from
libstdc++6-12-dbg), N random addresses inside functions (tests/integration's
compare_llvm.Symbols, seed 1), then ROUNDS rounds, each running once, in turn:
symbolctl addr2line -e FILE (index build included), --baseline's symbolctl if
given, llvm-symbolizer --obj FILE --inlining, binutils addr2line -f -i -e FILE,
all reading the addresses on stdin. Prints the median wall seconds and the
median CPU seconds (user + sys) of each, and ours over the faster peer.
Not a test: nothing is checked. The machine's load moves wall figures; the
CPU figures and the ratio within one round move less.
"""
import argparse, os, random, resource, statistics, subprocess, sys, tempfile, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(root, "tests", "integration"))
import compare_llvm  # noqa: E402


def libc_debug():
    out = subprocess.run(["readelf", "-n", os.path.realpath("/lib/x86_64-linux-gnu/libc.so.6")],
                         capture_output=True, text=True).stdout
    bid = out.split("Build ID: ")[1].split()[0]
    return "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])


def run(cmd, addrs):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    with open(addrs, "rb") as f:
        subprocess.run(cmd, stdin=f, stdout=subprocess.DEVNULL, check=True)
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(root, "build"))
    ap.add_argument("--baseline", help="another symbolctl to run in the same rounds")
    ap.add_argument("-n", type=int, default=100000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    files = a.files or [libc_debug(), "/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30"]
    ours = os.path.join(a.build, "cmd", "symbolctl", "symbolctl")
    tmp = tempfile.mkdtemp(prefix="bench_cold.")
    for path in files:
        syms = compare_llvm.Symbols(path, demangle=False)
        addrs = os.path.join(tmp, "addrs.txt")
        with open(addrs, "w") as f:
            f.write("".join("0x%x\n" % x for x in syms.draw(a.n, random.Random(1))))
        tools = [("ours: symbolctl addr2line -e", [ours, "addr2line", "-e", path])]
        if a.baseline:
            tools.append(("baseline symbolctl", [a.baseline, "addr2line", "-e", path]))
        tools += [("llvm-symbolizer --obj", ["llvm-symbolizer", "--obj=" + path, "--inlining"]),
                  ("addr2line -f -i -e (binutils)", ["addr2line", "-f", "-i", "-e", path])]
        res = {name: [] for name, _ in tools}
        for _ in range(a.rounds):
            for name, cmd in tools:
                res[name].append(run(cmd, addrs))
        print("== %s (%d bytes), %d addresses, %d interleaved rounds, %d CPUs"
              % (path, os.path.getsize(path), a.n, a.rounds, os.cpu_count()))
        med = {}
        for name, _ in tools:
            w = statistics.median(r[0] for r in res[name])
            c = statistics.median(r[1] for r in res[name])
            spread = max(r[0] for r in res[name]) / max(min(r[0] for r in res[name]), 1e-9)
            med[name] = (w, c)
            print("  %-32s wall %7.3f s  cpu %7.3f s  (wall max/min %.2f)" % (name, w, c, spread))
        peer = min(med["llvm-symbolizer --obj"][0], med["addr2line -f -i -e (binutils)"][0])
        peer_cpu = min(med["llvm-symbolizer --obj"][1], med["addr2line -f -i -e (binutils)"][1])
        o = med["ours: symbolctl addr2line -e"]
        line = "  ours / faster peer: wall %.2f, cpu %.2f (goal: wall <= 0.33)" % (o[0] / peer,
                                                                                o[1] / peer_cpu)
        if a.baseline:
            b = med["baseline symbolctl"]
            line += "; baseline / faster peer: wall %.2f, cpu %.2f" % (b[0] / peer, b[1] / peer_cpu)
        print(line)
    print()


if __name__ == "__main__":
    main()
