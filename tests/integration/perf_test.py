# SPDX-License-Identifier: Apache-2.0
"""`symbolctl pprof --perf perf.data` end to end (issue 31, item 1).

    perf_test.py --symbolizerd BIN --symbolctl BIN [CASE...]

The newcomer's path of docs/symbolctl.md, run as written: a daemon over a
debug dir, `perf record -g -e cpu-clock ./prog` (a software event: no PMU
needed) of a C program built here (frame pointers, a function inlined into
its caller), `symbolctl pprof --perf perf.data -o prof.pb.gz`, then
`go tool pprof -top` and `-traces -lines`: the right functions, file:line and
the inline frame. perf itself is the oracle for what was recorded: the
samples and the sum of periods `perf script` prints equal the profile's
totals, the build IDs of `perf buildid-list` are those of the mappings
(the kernel's included), each mapping starts where perf's MMAP2 record says.
Also: $SYMBOLIZER_URL as the default server, --debug-dir (no daemon: the same
stacks and lines), a `--call-graph dwarf` recording,
a pipe-mode file, a truncated file and a file that is none refused with exit
status 4 and a message naming what is wrong.
"""
import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import profile_pb  # noqa: E402
from daemon_lib import Daemon  # noqa: E402
from upstream_lib import check, run_cases, tempdir  # noqa: E402

PROG = r'''
#include <stdio.h>
#include <stdlib.h>
static inline __attribute__((always_inline)) unsigned long mix(unsigned long x)
{
	for (int i = 0; i < 1000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul; /* MIX */
	return x;
}
__attribute__((noinline)) void keep(unsigned long *s)
{
	__asm__ volatile("" : : "r"(s) : "memory");
}
__attribute__((noinline)) unsigned long work(unsigned long n)
{
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += mix(i); /* WORK */
	keep(&s); /* a call: work has a frame of its own */
	return s;
}
__attribute__((noinline)) unsigned long outer(unsigned long n)
{
	return work(n) + 1; /* OUTER */
}
int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], 0, 10) : 300000;
	printf("%lu\n", outer(n)); /* MAIN */
	return 0;
}
'''


def line_of(marker):
    for i, text in enumerate(PROG.split("\n"), 1):
        if marker in text:
            return i
    raise AssertionError(marker)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def build_id_of(path):
    out = run(["readelf", "-n", path]).stdout
    return re.search(r"Build ID: ([0-9a-f]+)", out).group(1)


def user_stacks(p, prog):
    """{stack of the program's function names (outermost of each location): samples}."""
    st = p["string_table"]
    mid = {m["id"]: st[m["filename"]] for m in p["mapping"]}
    fname = {f["id"]: st[f["name"]] for f in p["function"]}
    locs = {loc["id"]: loc for loc in p["location"]}
    out = {}
    for s in p["sample"]:
        key = tuple(fname[locs[i]["line"][-1][0]] for i in s["location_id"]
                    if mid.get(locs[i]["mapping_id"]) == prog and locs[i]["line"])
        if key:
            out[key] = out.get(key, 0) + s["value"][0]
    return out


def perf_stacks(data, prog):
    """The same from `perf script` (perf's own symbols)."""
    text = run(["perf", "script", "-i", data, "-F", "ip,sym,dso"]).stdout
    out = {}
    for block in text.split("\n\n"):
        key = tuple(m.group(1) for m in re.finditer(r"^\s*[0-9a-f]+ (\S+) \((\S+)\)$", block, re.M)
                    if m.group(2) == prog)
        if key:
            out[key] = out.get(key, 0) + 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    for tool in ("perf", "go", "gcc"):
        check(shutil.which(tool), "%s is not installed (scripts/install-deps.sh)" % tool)
    work = tempdir("perf_test.")
    src, prog = os.path.join(work, "prog.c"), os.path.join(work, "prog")
    with open(src, "w") as f:
        f.write(PROG)
    r = run(["gcc", "-O2", "-g", "-fno-omit-frame-pointer", "-fno-shrink-wrap",
             "-Wl,--build-id", "-o", prog, src])
    check(r.returncode == 0, "gcc: " + r.stderr)
    bid = build_id_of(prog)
    dbg = os.path.join(work, "debug")
    os.makedirs(os.path.join(dbg, ".build-id", bid[:2]))
    shutil.copy(prog, os.path.join(dbg, ".build-id", bid[:2], bid[2:] + ".debug"))
    dirs = [dbg] + (["/usr/lib/debug"] if os.path.isdir("/usr/lib/debug/.build-id") else [])
    d = Daemon(args.symbolizerd, os.path.join(work, "data"), os.path.join(work, "d.log"),
               debug_dirs=dirs)
    data = os.path.join(work, "perf.data")
    out = os.path.join(work, "prof.pb.gz")

    def ctl(*a, env=None):
        return run([args.symbolctl] + list(a), env=env, stdin=subprocess.DEVNULL)

    def newcomer():
        r = run(["perf", "record", "-q", "-g", "-e", "cpu-clock", "-o", data, prog], cwd=work)
        check(r.returncode == 0, "perf record: " + r.stderr)
        r = ctl("pprof", "--perf", data, "-o", out, "--server", d.url, "--wait", "60s")
        check(os.path.exists(out), "no profile written: " + r.stderr)
        # Only mappings without debug info anywhere here may be reported: the
        # kernel's and the vdso's; the program's must symbolize.
        for line in r.stderr.splitlines():
            if line.startswith("symbolctl pprof: mapping"):
                check("kernel" in line or "vdso" in line or "ld-linux" in line or
                      "libc" in line, "mapping reported: " + line)
        check(r.returncode in (0, 1), "exit %d: %s" % (r.returncode, r.stderr))
        top = run(["go", "tool", "pprof", "-symbolize=none", "-top", out])
        check(top.returncode == 0, "go tool pprof -top: " + top.stderr)
        check(re.search(r"\bmix \(inline\)", top.stdout) and " work" in top.stdout,
              "-top lacks mix (inline) / work:\n" + top.stdout)
        tr = run(["go", "tool", "pprof", "-symbolize=none", "-traces", "-lines", out]).stdout
        pat = r"mix %s:%d \(inline\)\s+work %s:%d\s" % (re.escape(src), line_of("MIX"),
                                                           re.escape(src), line_of("WORK"))
        check(re.search(pat, tr), "-traces -lines lacks the stack %s:\n%s" % (pat, tr[:3000]))
        print("  go tool pprof -top:\n" + "\n".join(top.stdout.splitlines()[:10]))
        # perf's own view of the same file: totals, build IDs, mapping addresses.
        p = profile_pb.decode(gzip.decompress(open(out, "rb").read()))
        st = p["string_table"]
        check([(st[t], st[u]) for t, u in p["sample_type"]] ==
              [("samples", "count"), ("cpu", "nanoseconds")], "sample types %r" % p["sample_type"])
        periods = [int(x) for x in run(["perf", "script", "-i", data, "-F", "period"]).stdout.split()]
        got = [sum(s["value"][i] for s in p["sample"]) for i in (0, 1)]
        check(got == [len(periods), sum(periods)],
              "samples/period %r, perf script says %r" % (got, [len(periods), sum(periods)]))
        maps = {st[m["filename"]]: m for m in p["mapping"]}
        check(prog in maps and st[maps[prog]["build_id"]] == bid,
              "no mapping of %s with build ID %s: %r" % (prog, bid, maps))
        check(user_stacks(p, prog) == perf_stacks(data, prog),
              "the program's stacks differ from perf script's:\n%r\n%r" %
              (user_stacks(p, prog), perf_stacks(data, prog)))
        mm = run(["perf", "script", "-i", data, "--show-mmap-events"]).stdout
        starts = [int(a, 16) for a, f in re.findall(r"PERF_RECORD_MMAP2 \S+: \[(0x[0-9a-f]+)\(.*\]: r-xp (\S+)", mm) if f == prog]
        check(maps[prog]["memory_start"] in starts, "mapping start %#x not in %r" %
              (maps[prog]["memory_start"], starts))
        for line in run(["perf", "buildid-list", "-i", data]).stdout.splitlines():
            hexid, name = line.split(None, 1)
            for fname, m in maps.items():
                if fname == name or (name == "[kernel.kallsyms]" and fname.startswith(name)):
                    check(st[m["build_id"]] == hexid, "%s: build ID %s, perf says %s" %
                          (fname, st[m["build_id"]], hexid))

    def env_server():
        env = dict(os.environ, SYMBOLIZER_URL=d.url)
        o2 = os.path.join(work, "env.pb.gz")
        r = ctl("pprof", "-q", "--perf", data, "-o", o2, env=env)
        check(r.returncode in (0, 1) and os.path.exists(o2), "with $SYMBOLIZER_URL: " + r.stderr)
        check("samples" not in r.stderr, "-q still counts: " + r.stderr)

    def offline():
        """--debug-dir: no daemon, the same fill step: the same stacks and lines."""
        o2 = os.path.join(work, "offline.pb.gz")
        r = ctl("pprof", "-q", "--perf", data, "-o", o2, *["--debug-dir=" + x for x in dirs])
        check(r.returncode in (0, 1) and os.path.exists(o2), "--debug-dir: " + r.stderr)
        a = profile_pb.decode(gzip.decompress(open(out, "rb").read()))
        b = profile_pb.decode(gzip.decompress(open(o2, "rb").read()))
        check(user_stacks(a, prog) == user_stacks(b, prog) and user_stacks(b, prog),
              "offline stacks differ:\n%r\n%r" % (user_stacks(a, prog), user_stacks(b, prog)))
        tr = run(["go", "tool", "pprof", "-symbolize=none", "-traces", "-lines", o2]).stdout
        check(re.search(r"mix %s:%d \(inline\)" % (re.escape(src), line_of("MIX")), tr),
              "offline -traces lacks the inline frame:\n" + tr[:2000])

    def refused():
        dw = os.path.join(work, "dwarf.data")
        r = run(["perf", "record", "-q", "--call-graph", "dwarf", "-e", "cpu-clock", "-o", dw,
                 prog, "20000"], cwd=work)
        check(r.returncode == 0, "perf record --call-graph dwarf: " + r.stderr)
        pipe = os.path.join(work, "pipe.data")
        with open(pipe, "wb") as f:
            r = subprocess.run(["perf", "record", "-q", "-g", "-e", "cpu-clock", "-o", "-",
                                prog, "20000"], stdout=f, stderr=subprocess.PIPE, cwd=work)
        check(r.returncode == 0, "perf record -o -: %r" % r.stderr)
        trunc = os.path.join(work, "trunc.data")
        with open(data, "rb") as f, open(trunc, "wb") as g:
            g.write(f.read()[:os.path.getsize(data) // 2])
        for path, msg in [(dw, "--call-graph dwarf"), (pipe, "written to a pipe"),
                          (trunc, "runs past the end of the file"),
                          ("/etc/passwd", "not a perf.data file"),
                          (os.path.join(work, "absent"), "No such file")]:
            r = ctl("pprof", "--perf", path, "-o", os.path.join(work, "x.pb.gz"),
                    "--server", d.url)
            check(r.returncode == 4 and msg in r.stderr,
                  "%s: exit %d, %r (want 4, %r)" % (path, r.returncode, r.stderr, msg))

    try:
        return run_cases([("newcomer", newcomer), ("env_server", env_server),
                          ("offline", offline), ("refused", refused)], args.cases)
    finally:
        d.stop()


if __name__ == "__main__":
    sys.exit(main())
