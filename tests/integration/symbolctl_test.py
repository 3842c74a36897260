#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""symbolctl for people: debug file lookup, the progress line, warming a daemon,
exit codes.

    symbolctl_test.py --symbolctl BIN --symbolizerd BIN --fixtures DIR [CASE...]

Cases: `addr2line -e` on a stripped copy of the c_stripped fixture finds its
debug file by build ID under --debug-dir, and by .gnu_debuglink (next to the
file, in .debug/, under the debug dir + the file's directory, a renamed link
made here with objcopy), each answer equal to `symbolctl addr2line` on the
debug file and to llvm-symbolizer's own lookup (--debug-file-directory); a link
whose CRC does not match and --no-debug-lookup answer from the symbols; the
progress line is drawn on a terminal (a pty) and never on a pipe or with
--no-progress; `symbolctl fetch --server` warms a running daemon (the store
holds the index afterwards: a call with locations answers OK at once, with no
new fetch in /metrics), asking again while the daemon answers PENDING; each
documented exit status (0 ok, 1 not found, 2 usage, 3 server down, 4 locked
store or unreadable file). `consistency` (issue 31), a table: one --server
default ($SYMBOLIZER_URL) for symbolize, status, pprof and upload; uppercase
build IDs taken by the client and the daemon; `--` ends flags; one rule for
a bad stdin line in symbolize and addr2line; pprof's bad input exits 4 and a
terminal stdout is refused; upload notices a wrong token with nothing to
upload; layout -e finds a stripped file's debug file as addr2line -e does.

Nothing here talks to anything but 127.0.0.1.
"""
import argparse
import os
import pty
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pb  # noqa: E402
from daemon_lib import Daemon  # noqa: E402
from upstream_lib import FaultServer, build_id, check, free_port, run_cases, tempdir  # noqa: E402

TIMEOUT_S = 120


def run(cmd, stdin=""):
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=TIMEOUT_S)


def run_pty(cmd):
    """(exit status, everything written to the terminal) of cmd run on a pty
    (stdin, stdout and stderr all the terminal)."""
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execv(cmd[0], cmd)
        finally:
            os._exit(127)
    out = b""
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def function_addresses(path):
    """Two addresses inside each function symbol of a file, sorted."""
    out = run(["nm", "-S", "--defined-only", path]).stdout
    addrs = set()
    for line in out.splitlines():
        p = line.split()
        if len(p) == 4 and p[2] in "tTwW" and int(p[1], 16) > 0:
            start, size = int(p[0], 16), int(p[1], 16)
            addrs.update((start, start + size // 2))
    check(addrs, "no function symbols in %s" % path)
    return sorted(addrs)


def locations(text):
    """The file:line:column lines of llvm-symbolizer output (names left out:
    llvm-symbolizer names the outermost frame by a .symtab name, e.g.
    "checked_div.cold", a quirk compare_llvm.py deals with on its own)."""
    return [l for l in text.split("\n") if l.count(":") >= 2 or l.startswith("??:")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    S = args.symbolctl
    fx = lambda name: os.path.join(args.fixtures, name)  # noqa: E731
    work = os.path.realpath(tempdir("symbolctl-test-"))
    debug = fx("c_stripped.debug")
    bid = build_id(fx("c_stripped"))
    check(build_id(debug) == bid, "fixture pair disagrees")
    addrs = function_addresses(debug)
    hexaddrs = ["%x" % a for a in addrs]
    counter = [0]

    def fresh(name):
        counter[0] += 1
        d = os.path.join(work, "%s%d" % (name, counter[0]))
        os.makedirs(d)
        return d

    def build_id_dir():
        """A debug dir holding c_stripped.debug by build ID."""
        d = fresh("debug")
        os.makedirs(os.path.join(d, ".build-id", bid[:2]))
        shutil.copy(debug, os.path.join(d, ".build-id", bid[:2], bid[2:] + ".debug"))
        return d

    def a2l(exe, extra=()):
        p = run([S, "addr2line"] + list(extra) + ["-e", exe] + hexaddrs)
        check(p.returncode == 0, "addr2line %s: rc=%d %s" % (exe, p.returncode, p.stderr))
        return p.stdout, p.stderr

    want = a2l(debug)[0]
    check(want.count(".c:") >= len(addrs) // 2, "the debug file gives no lines:\n" + want)
    from_symbols = a2l(fx("c_stripped"), ["--no-debug-lookup"])[0]
    check(from_symbols != want and ".c:" not in from_symbols,
          "the stripped file alone has lines:\n" + from_symbols)

    def stripped_copy(strip_all=False):
        """bin/c_stripped without its debug file next to it (and, with strip_all,
        without .symtab either)."""
        d = fresh("bin")
        exe = os.path.join(d, "c_stripped")
        shutil.copy(fx("c_stripped"), exe)
        if strip_all:
            subprocess.run(["strip", "--strip-all", exe], check=True)
        return exe

    def by_build_id():
        dd = build_id_dir()
        for strip_all in (False, True):
            exe = stripped_copy(strip_all)
            out, err = a2l(exe, ["--debug-dir", dd, "--verbose"])
            check(out == want, "by build ID (strip_all=%s):\n%s\nwant:\n%s" % (strip_all, out, want))
            check("(by build-id)" in err and dd in err, "--verbose: " + err)
            llvm = run(["llvm-symbolizer", "--obj=" + exe, "--debug-file-directory=" + dd]
                       + ["0x" + a for a in hexaddrs])
            check(llvm.returncode == 0 and locations(llvm.stdout) == locations(want),
                  "llvm-symbolizer's own lookup differs:\n%s\nwant:\n%s" % (llvm.stdout, want))
        # A second debug dir, given first, that does not have it.
        out, _ = a2l(exe, ["--debug-dir", fresh("empty"), "--debug-dir", dd])
        check(out == want, "second --debug-dir")
        # A file at the build-id path with another build ID is not taken.
        bad = build_id_dir()
        shutil.copy(fx("c_O2_dw5"), os.path.join(bad, ".build-id", bid[:2], bid[2:] + ".debug"))
        out, err = a2l(stripped_copy(), ["--debug-dir", bad, "--verbose"])
        check(out == from_symbols and "not the build ID" in err, "wrong build ID taken: " + err)

    def by_debuglink():
        empty = fresh("empty")
        # Next to the file, and in its .debug/ subdir (the fixture's link names c_stripped.debug).
        exe = stripped_copy()
        d = os.path.dirname(exe)
        shutil.copy(debug, os.path.join(d, "c_stripped.debug"))
        out, err = a2l(exe, ["--debug-dir", empty, "--verbose"])
        check(out == want and "(by debuglink)" in err, "next to the file: " + err)
        exe = stripped_copy()
        os.makedirs(os.path.join(os.path.dirname(exe), ".debug"))
        shutil.copy(debug, os.path.join(os.path.dirname(exe), ".debug", "c_stripped.debug"))
        out, err = a2l(exe, ["--debug-dir", empty, "--verbose"])
        check(out == want and "/.debug/c_stripped.debug" in err, "in .debug/: " + err)
        # Under the debug dir + the file's absolute directory, with a link made
        # here by objcopy to another name.
        exe = stripped_copy(strip_all=True)
        d = os.path.dirname(exe)
        dd = fresh("debug")
        os.makedirs(dd + d)
        renamed = dd + d + "/renamed.dbg"
        shutil.copy(debug, renamed)
        subprocess.run(["objcopy", "--remove-section=.gnu_debuglink", exe], check=True)
        subprocess.run(["objcopy", "--add-gnu-debuglink=" + renamed, exe], check=True)
        out, err = a2l(exe, ["--debug-dir", dd, "--verbose"])
        check(out == want and renamed in err, "under DIR + the file's dir: " + err)
        # (llvm-symbolizer takes this directory as --fallback-debug-path.)
        llvm = run(["llvm-symbolizer", "--obj=" + exe, "--fallback-debug-path=" + dd]
                   + ["0x" + a for a in hexaddrs])
        check(locations(llvm.stdout) == locations(want),
              "llvm-symbolizer's debuglink lookup differs:\n" + llvm.stdout)
        # A CRC that does not match: skipped; this copy has no .symtab either,
        # so nothing is left to answer from (exit 4).
        with open(renamed, "ab") as f:
            f.write(b"\0")
        p = run([S, "addr2line", "--debug-dir", dd, "--verbose", "-e", exe] + hexaddrs)
        check(p.returncode == 4 and "CRC" in p.stderr and "skipped" in p.stderr,
              "bad CRC: rc=%d %s" % (p.returncode, p.stderr))

    def no_debug_lookup():
        dd = build_id_dir()
        out, err = a2l(stripped_copy(), ["--debug-dir", dd, "--no-debug-lookup", "--verbose"])
        check(out == from_symbols and "file itself" in err, "--no-debug-lookup: " + err)

    fetch_args = ["--debuginfod-upstream-servers=", "--no-progress"]

    def progress_line():
        dd = build_id_dir()
        cmd = [S, "fetch", "--data-dir", os.path.join(fresh("store"), "s"),
               "--debug-dir", dd, "--debuginfod-upstream-servers=", bid]
        rc, text = run_pty(cmd)
        check(rc == 0, "fetch on a pty: rc=%d %r" % (rc, text))
        check("\rfetch: 0/1 done" in text, "no progress line on a terminal: %r" % text)
        check(text.rstrip("\r\n").endswith(" source=" + dd) or (bid + " ok") in text,
              "no result line: %r" % text)
        last = text.rfind("\r\033[K")
        check(last >= 0 and "fetch:" not in text[last:], "the line is not cleared: %r" % text)
        # A pipe: nothing but the result lines.
        p = run(cmd)
        check(p.returncode == 0 and "\r" not in p.stderr + p.stdout and "fetch:" not in p.stderr,
              "progress on a pipe: %r %r" % (p.stdout, p.stderr))
        check(p.stdout.startswith(bid + " ok"), "pipe output: %r" % p.stdout)
        # --no-progress on a terminal.
        rc, text = run_pty(cmd[:2] + ["--no-progress"] + cmd[2:])
        check(rc == 0 and "\r\033[K" not in text and "fetch:" not in text,
              "--no-progress: %r" % text)

    def warm_daemon():
        dd = build_id_dir()
        data = os.path.join(fresh("daemon"), "data")
        d = Daemon(args.symbolizerd, data, os.path.join(work, "warm.log"), debug_dirs=[dd])
        try:
            rc, text = run_pty([S, "fetch", "--server", d.url, bid])
            check(rc == 0 and (bid + " ok functions=1 lines=1") in text, "warm: %r" % text)
            check("\rwarm: 0/1 done" in text, "no progress line for --server: %r" % text)
            check(d.metric('symbolizer_fetches_total{outcome="local"}') == 1, "no local fetch")
            check(d.metric('symbolizer_index_builds_total{result="ok"}') == 1, "no index build")
            # Warm: a call with locations answers OK at once, with nothing fetched again.
            resp = d.symbolize([pb.mapping(bid)], [pb.location(0, a) for a in addrs],
                               max_wait_ms=1)
            m = resp["mappings"][0]
            check(pb.STATUS[m["status"]] == "OK" and m["has_line_numbers"], "after warming: %r" % m)
            check(d.metric('symbolizer_fetches_total{outcome="local"}') == 1, "fetched again")
            check(d.metric('symbolizer_index_builds_total{result="ok"}') == 1, "built again")
            sym = run([S, "symbolize", "--server", d.url, "--build-id", bid] + hexaddrs)
            check(sym.returncode == 0 and sym.stdout == want, "symbolize after warming")
            # The store itself is the daemon's: a local fetch says so, exit 4.
            p = run([S, "fetch", "--data-dir", data] + fetch_args + [bid])
            check(p.returncode == 4, "locked store: rc=%d %s" % (p.returncode, p.stderr))
            check("in use by a running symbolizerd: use symbolctl fetch --server URL" in p.stderr,
                  "locked store message: " + p.stderr)
            # Unknown build IDs: one line each, exit 1; a pipe gets no progress.
            p = run([S, "fetch", "--server", d.url, bid, "00112233"])
            check(p.returncode == 1 and "00112233 not_found" in p.stdout
                  and (bid + " ok") in p.stdout and "\r" not in p.stderr,
                  "not found through --server: rc=%d %r %r" % (p.returncode, p.stdout, p.stderr))
        finally:
            check(d.stop() == 0, "symbolizerd did not exit 0")

    def warm_pending():
        """A slow upstream and a daemon that waits 100 ms at most: PENDING, then
        asked again after the retry hint until OK."""
        slow, slow2 = fx("c_O2_dw5"), fx("c_O2_dw4")
        dbid, dbid2 = build_id(slow), build_id(slow2)
        check(dbid != dbid2, "two fixtures share a build ID")
        fs = FaultServer(work, "slow", {dbid + "/debuginfo": "slow:" + slow,
                                        dbid2 + "/debuginfo": "slow:" + slow2})
        d = Daemon(args.symbolizerd, os.path.join(fresh("daemon"), "data"),
                   os.path.join(work, "pending.log"), upstreams=[fs.url],
                   extra=["--max-wait", "100ms"])
        try:
            # The download takes 300 ms, a call waits 100 ms: PENDING, then OK.
            p = run([S, "fetch", "--server", d.url, "--wait", "30s", dbid])
            check(p.returncode == 0 and (dbid + " ok") in p.stdout,
                  "after PENDING: rc=%d %r %r" % (p.returncode, p.stdout, p.stderr))
            check(d.metric('symbolizer_mappings_total{status="pending"}') >= 1,
                  "the first call was not PENDING")
            check(fs.requests(dbid + "/debuginfo") == 1, "downloads: %s" % fs.stats())
            # --wait runs out first: the line says pending, exit 1.
            p = run([S, "fetch", "--server", d.url, "--wait", "1ms", dbid2])
            check(p.returncode == 1 and (dbid2 + " pending") in p.stdout,
                  "--wait 1ms: rc=%d %r" % (p.returncode, p.stdout))
        finally:
            d.stop()
            fs.stop()

    def exit_codes():
        down = "http://127.0.0.1:%d" % free_port()
        store = os.path.join(fresh("store"), "s")
        cases = [
            # 2: usage
            (2, [S]), (2, [S, "nosuchcommand"]), (2, [S, "addr2line"]),
            (2, [S, "addr2line", "-e", debug, "--nosuchflag"]),
            (2, [S, "fetch", "--nosuchflag"]), (2, [S, "fetch", "--wait", "soon", "ab"]),
            (2, [S, "symbolize", "--server", down]),
            # 1: not found
            (1, [S, "fetch", "--data-dir", store, "--debug-dir="] + fetch_args + ["00112233"]),
            # 3: server down
            (3, [S, "symbolize", "--server", down, "--build-id", bid, "1000"]),
            (3, [S, "fetch", "--server", down, bid]),
            # 4: local files
            (4, [S, "addr2line", "-e", os.path.join(work, "nosuchfile"), "1000"]),
            (4, [S, "addr2line", "-e", "/dev/null", "1000"]),
            # 0
            (0, [S, "addr2line", "-e", debug, "1000"]),
            (0, [S, "fetch", "--data-dir", store, "--info", bid]),
        ]
        for want_rc, cmd in cases:
            p = run(cmd)
            check(p.returncode == want_rc, "%s: rc=%d, want %d\n%s" % (
                " ".join(cmd[1:]), p.returncode, want_rc, p.stderr[:500]))
        for cmd in ("addr2line", "fetch", "symbolize"):
            p = run([S, cmd, "--help"])
            check(p.returncode == 0 and "3 server or transport error, 4 local I/O" in p.stdout,
                  "%s --help documents no exit status" % cmd)

    def consistency():
        """symbolctl behaves the same everywhere (issue 31, item 2), table-driven:
        (what, argv, env, stdin, exit status, text in stderr, text in stdout)."""
        token = "0123456789abcdef0123456789abcdef"
        tdir = fresh("token")
        good_tok, bad_tok = os.path.join(tdir, "good"), os.path.join(tdir, "bad")
        for path, t in ((good_tok, token), (bad_tok, "f" * 32)):
            with open(path, "w") as f:
                f.write(t + "\n")
            os.chmod(path, 0o600)
        d = Daemon(args.symbolizerd, os.path.join(fresh("daemon"), "data"),
                   os.path.join(work, "consistency.log"), debug_dirs=[build_id_dir()],
                   extra=["--upload-token-file", good_tok])
        env = dict(os.environ, SYMBOLIZER_URL=d.url)
        up = bid.upper()
        a = hexaddrs[0]
        bad_stdin = "%s\nnot-an-address\n%s\n" % (a, a)
        table = [
            # one --server default: $SYMBOLIZER_URL (uppercase build IDs lowercased)
            ("symbolize $SYMBOLIZER_URL", [S, "symbolize", "--build-id", up, a], env, "",
             0, "", ".c:"),
            ("status $SYMBOLIZER_URL", [S, "status", up], env, "", 0, "", bid),
            ("pprof $SYMBOLIZER_URL, /etc/passwd: bad input", [S, "pprof", "/etc/passwd", "-o",
             os.path.join(work, "p.pb")], env, "", 4, "not a pprof profile", ""),
            ("upload: wrong token noticed with nothing to upload",
             [S, "upload", "--token-file", bad_tok, debug], env, "", 3, "refused the token",
             "present"),
            ("upload: right token, nothing to upload", [S, "upload", "--token-file", good_tok,
             debug], env, "", 0, "", "present"),
            ("upload --help: --token-file required", [S, "upload", "--help"], env, "", 0, "",
             "] --token-file F ["),
            # -- ends flags
            ("addr2line --", [S, "addr2line", "-e", debug, "--", a], None, "", 0, "", ".c:"),
            ("symbolize --", [S, "symbolize", "--build-id", bid, "--", a], env, "", 0, "",
             ".c:"),
            ("status --", [S, "status", "--", bid], env, "", 0, "", bid),
            ("pprof --: a file named like a flag", [S, "pprof", "-o", os.path.join(work, "q"),
             "--", "--no-such-file"], env, "", 4, "--no-such-file", ""),
            # one rule for a bad input line: ?? in its place, echoed on stderr, exit 1
            ("symbolize: bad stdin line", [S, "symbolize", "--build-id", bid], env, bad_stdin,
             1, "not a hex address: not-an-address", "\n\n??\n??:0:0\n\n"),
            ("addr2line: bad stdin line", [S, "addr2line", "-e", debug], None, bad_stdin, 1,
             "not a hex address: not-an-address", "\n\n??\n??:0:0\n\n"),
            # layout -e finds the debug file as addr2line -e does (.gnu_debuglink here)
            ("layout -e stripped", [S, "layout", "-e", fx("c_stripped"), "--sizes"], None, "",
             0, "", "op\t16"),
        ]
        try:
            for what, argv, e, stdin, want_rc, want_err, want_out in table:
                p = subprocess.run(argv, input=stdin, capture_output=True, text=True,
                                   timeout=TIMEOUT_S, env=e)
                check(p.returncode == want_rc and want_err in p.stderr and want_out in p.stdout,
                      "%s: rc=%d (want %d)\nstderr: %s\nstdout: %s" % (
                          what, p.returncode, want_rc, p.stderr[:600], p.stdout[:600]))
            # Both answers of the bad-line rule line up: three blocks for three lines.
            for argv in ([S, "symbolize", "--server", d.url, "--build-id", bid],
                         [S, "addr2line", "-e", debug]):
                out = run(argv, bad_stdin).stdout
                check(out.count("\n\n") == 3, "%s: %r" % (argv[1], out))
            # pprof refuses a terminal for its binary output.
            rc, text = run_pty([S, "pprof", "--server", d.url, fx("c_O2_dw5")])
            check(rc == 2 and "stdout is a terminal" in text, "pprof on a tty: %d %r" % (rc, text))
            # The daemon lowercases at its edge too.
            c = d.conn()
            c.request("GET", "/buildid/%s/status" % up)
            r = c.getresponse()
            body = r.read().decode()
            c.close()
            check(r.status == 200 and bid in body, "GET status of %s: %d %s" % (up, r.status, body))
        finally:
            d.stop()

    rc = run_cases([
        ("consistency", consistency),
        ("addr2line_by_build_id", by_build_id),
        ("addr2line_by_debuglink", by_debuglink),
        ("addr2line_no_debug_lookup", no_debug_lookup),
        ("progress_line", progress_line),
        ("fetch_server_warms", warm_daemon),
        ("fetch_server_pending", warm_pending),
        ("exit_codes", exit_codes),
    ], args.cases)
    if rc == 0:
        shutil.rmtree(work, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
