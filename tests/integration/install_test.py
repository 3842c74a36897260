#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""install_test: `cmake --install` of the build tree into a throwaway DESTDIR,
then the installed programs and pages as a user meets them:

- every file lands where the prefix says (bin, man1, man8; deploy/'s systemd
  unit and environment file when the source tree has them, with the unit's
  paths made the prefix's);
- `symbolizerd --version`, `symbolctl --version` and `symbolctl version` print
  the project's version and one git revision (a commit of this repository,
  HEAD's unless the build is older);
- both man pages render with `man -l` and `groff -ww` without a warning, name
  the project's version, and document every flag and subcommand `--help` lists;
- `symbolctl version --server` against the installed symbolizerd on
  127.0.0.1:0 prints both versions; /version answers JSON, /healthz is unchanged;
  exit status 3 for a server that is not there, 2 for a bad flag;
- symbolctl is two programs: the front in bin/ links none of the daemon's
  libraries (RocksDB, libcurl, libarchive, libevent, nghttp2, protobuf-c,
  json-c) and runs `addr2line` itself; every other command (the version lines
  above) reaches symbolctl-full in libexec/symbolizer/ by exec. A front copied
  away from it still answers `addr2line`, and any other command exits 4 naming
  where it looked.

Nothing here talks to anything but 127.0.0.1.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request

from daemon_lib import Daemon
from upstream_lib import TestFailure, check, free_port, tempdir

VERSION_LINE = r"^%s (\S+) \(([A-Za-z0-9._+-]+)\)$"


def run(cmd, env=None, rc=0):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    check(p.returncode == rc, "%s: exit %d, expected %d\nstdout: %s\nstderr: %s"
          % (" ".join(cmd), p.returncode, rc, p.stdout, p.stderr))
    return p


def version_of(name, text):
    m = re.match(VERSION_LINE % re.escape(name), text.strip())
    check(m, "not a version line of %s: %r" % (name, text))
    return m.group(1), m.group(2)


def git(source, *args):
    p = subprocess.run(["git", "-C", source] + list(args), capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else None


def check_revision(rev, source):
    """`git describe --always --dirty` at build time: [TAG-N-g]HASH[-dirty], a
    commit of this repository (HEAD unless a commit came after the build);
    "unknown" outside git."""
    if not os.path.exists(os.path.join(source, ".git")) or not shutil.which("git"):
        check(rev == "unknown", "revision %r outside git, expected 'unknown'" % rev)
        return
    m = re.match(r"^(?:.*-g)?([0-9a-f]{4,40})(-dirty)?$", rev)
    full = m and git(source, "rev-parse", "--verify", "--quiet", m.group(1) + "^{commit}")
    check(full, "revision %r names no commit of %s" % (rev, source))
    head = git(source, "rev-parse", "HEAD")
    if full != head:
        print("note revision %s is not HEAD %s: the build predates the last commit"
              % (rev, head[:12]))


def install(args, dest):
    env = dict(os.environ, DESTDIR=dest)
    run(["cmake", "--install", args.build], env=env)
    root = lambda p: dest + p  # noqa: E731  (the FULL paths are absolute)
    paths = {
        "symbolizerd": root(os.path.join(args.bindir, "symbolizerd")),
        "symbolctl": root(os.path.join(args.bindir, "symbolctl")),
        "symbolctl-full": root(os.path.join(args.libexecdir, "symbolizer", "symbolctl-full")),
        "symbolctl.1": root(os.path.join(args.mandir, "man1", "symbolctl.1")),
        "symbolizerd.8": root(os.path.join(args.mandir, "man8", "symbolizerd.8")),
    }
    for what, p in paths.items():
        check(os.path.isfile(p), "%s not installed at %s" % (what, p))
    for b in ("symbolizerd", "symbolctl", "symbolctl-full"):
        check(os.access(paths[b], os.X_OK), "%s is not executable" % paths[b])
    unit_src = os.path.join(args.source, "deploy", "systemd", "symbolizerd.service")
    env_src = os.path.join(args.source, "deploy", "symbolizerd.env")
    unit = root(os.path.join(args.unitdir, "symbolizerd.service"))
    envf = root(args.envfile)
    check(os.path.isfile(unit) == os.path.isfile(unit_src),
          "systemd unit: source %s, installed %s" % (os.path.isfile(unit_src), os.path.isfile(unit)))
    check(os.path.isfile(envf) == os.path.isfile(env_src),
          "environment file: source %s, installed %s" % (os.path.isfile(env_src),
                                                         os.path.isfile(envf)))
    if os.path.isfile(unit):
        text = open(unit).read()
        m = re.search(r"^ExecStart=(\S+)", text, re.M)
        check(m and m.group(1) == os.path.join(args.bindir, "symbolizerd"),
              "the installed unit starts %r, not the installed %s"
              % (m and m.group(1), os.path.join(args.bindir, "symbolizerd")))
    print("ok   installed into DESTDIR:", ", ".join(sorted(paths)),
          "(unit, env file: %s)" % ("yes" if os.path.isfile(unit) else "not in deploy/ yet"))
    return paths


def check_versions(args, paths):
    d = run([paths["symbolizerd"], "--version"]).stdout
    c = run([paths["symbolctl"], "--version"]).stdout
    c2 = run([paths["symbolctl"], "version"]).stdout
    check(c == c2, "symbolctl --version %r but symbolctl version %r" % (c, c2))
    dv, drev = version_of("symbolizerd", d)
    cv, crev = version_of("symbolctl", c)
    check(dv == args.version and cv == args.version,
          "versions %s and %s, project %s" % (dv, cv, args.version))
    check(drev == crev, "revisions differ: %s %s" % (drev, crev))
    check_revision(drev, args.source)
    print("ok   --version:", d.strip(), "|", c.strip())
    return drev


# Libraries the front symbolctl must not load (each costs startup time).
DAEMON_LIBS = ("librocksdb", "libcurl", "libarchive", "libevent", "libnghttp2", "libprotobuf-c",
               "libjson-c", "libstdc++")


def check_front(paths, work):
    front = paths["symbolctl"]
    dyn = run(["readelf", "-d", front]).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dyn)
    heavy = [n for n in needed if n.startswith(DAEMON_LIBS)]
    check(needed and not heavy, "the front symbolctl links %s (all: %s)" % (heavy, needed))
    # addr2line in the front's own process, from an installed ELF file with symbols.
    elf = paths["symbolctl-full"]
    addr = None
    for line in run(["nm", "--defined-only", elf]).stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "Tt" and f[2] == "main":
            addr = f[0]
    check(addr, "no main in %s" % elf)
    want = run([front, "addr2line", "-e", elf, addr]).stdout
    check(want.startswith("main\n"), "installed symbolctl addr2line: %r" % want)
    lonely = os.path.join(work, "lonely")
    os.makedirs(lonely)
    shutil.copy(front, lonely)
    alone = os.path.join(lonely, "symbolctl")
    check(run([alone, "addr2line", "-e", elf, addr]).stdout == want, "a lone front's addr2line")
    p = run([alone, "status", "--server", "http://127.0.0.1:1", "ab" * 20], rc=4)
    check("symbolctl-full" in p.stderr and lonely in p.stderr,
          "a lone front's other command: %r" % p.stderr)
    print("ok   front symbolctl: links %s; addr2line alone; the rest through symbolctl-full"
          % " ".join(needed))


def flags_of(help_text):
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", help_text))


def check_man(args, paths, name, helps):
    """Renders without warnings; names the version; every --help flag documented."""
    page = paths[name]
    env = dict(os.environ, MANWIDTH="80", MANPAGER="cat", PAGER="cat", LC_ALL="C.UTF-8")
    p = run(["man", "--warnings", "-l", page], env=env)
    check(not p.stderr.strip(), "man -l %s warns:\n%s" % (page, p.stderr))
    check("NAME" in p.stdout and "EXIT STATUS" in p.stdout,
          "man -l %s: no NAME or EXIT STATUS section:\n%s" % (page, p.stdout[:500]))
    # Every SYNOPSIS line is one command line of its own (a missing .br ran
    # two together once).
    syn = re.search(r"^SYNOPSIS\n(.*?)\n\n", p.stdout, re.M | re.S)
    prog = name.split(".")[0]
    check(syn, "man -l %s: no SYNOPSIS" % page)
    for line in syn.group(1).splitlines():
        # a command starts a line (a long one may wrap onto the next lines)
        check(prog not in line.split()[1:],
              "%s SYNOPSIS: two commands on one line: %r" % (name, line))
    g = run(["groff", "-man", "-Tutf8", "-ww", "-z", page], env=env)
    check(not g.stderr.strip(), "groff -ww %s warns:\n%s" % (page, g.stderr))
    src = open(page).read()
    th = re.search(r'^\.TH .*"symbolizer ([^"]+)"', src, re.M)
    check(th and th.group(1) == args.version,
          "%s: .TH names version %r, project %s" % (name, th and th.group(1), args.version))
    text = src.replace("\\-", "-").replace("\\&", "")
    missing = []
    for what, help_text in helps:
        for f in sorted(flags_of(help_text)):
            if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(f), text):
                missing.append("%s %s" % (what, f))
    check(not missing, "%s lacks flags its --help lists: %s" % (name, ", ".join(missing)))
    print("ok   %s renders without warnings, documents %d flags"
          % (name, sum(len(flags_of(h)) for _, h in helps)))
    return text


def check_man_pages(args, paths):
    d_help = run([paths["symbolizerd"], "--help"]).stdout
    check_man(args, paths, "symbolizerd.8", [("symbolizerd", d_help)])
    top = run([paths["symbolctl"], "--help"]).stdout
    cmds = re.findall(r"^  ([a-z][a-z0-9-]*) ", top, re.M)
    check("version" in cmds and "addr2line" in cmds, "symbolctl --help lists %r" % cmds)
    helps = [("symbolctl", top)]
    helps += [("symbolctl " + c, run([paths["symbolctl"], c, "--help"]).stdout) for c in cmds]
    text = check_man(args, paths, "symbolctl.1", helps)
    for c in cmds:
        check(re.search(r'^\.SS "symbolctl %s"$' % re.escape(c), text, re.M),
              "symbolctl.1 has no section for the command %s" % c)
    for code in range(5):
        check(re.search(r"^\.B %d$" % code, text, re.M), "symbolctl.1: exit status %d" % code)


def check_server_version(paths, rev, work):
    d = Daemon(paths["symbolizerd"], os.path.join(work, "data"), os.path.join(work, "d.log"))
    try:
        out = run([paths["symbolctl"], "version", "--server", d.url]).stdout.splitlines()
        check(len(out) == 2, "symbolctl version --server printed %r" % out)
        cv, crev = version_of("symbolctl", out[0])
        m = re.match(r"^symbolizerd (\S+) \((\S+)\) at (\S+)$", out[1])
        check(m and m.group(1) == cv and m.group(2) == rev and m.group(3) == d.url,
              "daemon line %r (expected version %s, revision %s, url %s)"
              % (out[1], cv, rev, d.url))
        with urllib.request.urlopen(d.url + "/version", timeout=10) as r:
            check(r.headers.get("Content-Type") == "application/json",
                  "/version content type %r" % r.headers.get("Content-Type"))
            body = json.loads(r.read())
        check(body == {"version": cv, "revision": rev}, "/version answered %r" % body)
        with urllib.request.urlopen(d.url + "/healthz", timeout=10) as r:
            check(r.read() == b"ok\n", "/healthz changed")
        print("ok   symbolctl version --server:", " | ".join(out))
    finally:
        check(d.stop() == 0, "symbolizerd exit status")
    gone = "http://127.0.0.1:%d" % free_port()
    p = run([paths["symbolctl"], "version", "--server", gone], rc=3)
    check(p.stdout.startswith("symbolctl "), "own version first even when the server is gone")
    check("symbolctl version:" in p.stderr, "no reason given: %r" % p.stderr)
    run([paths["symbolctl"], "version", "--bogus"], rc=2)
    run([paths["symbolctl"], "version", "--server"], rc=2)
    print("ok   exit status 3 for a server that is not there, 2 for bad usage")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True, help="the build tree to install")
    ap.add_argument("--source", required=True)
    ap.add_argument("--version", required=True, help="CMake's PROJECT_VERSION")
    ap.add_argument("--bindir", required=True, help="CMAKE_INSTALL_FULL_BINDIR")
    ap.add_argument("--libexecdir", required=True, help="CMAKE_INSTALL_FULL_LIBEXECDIR")
    ap.add_argument("--mandir", required=True, help="CMAKE_INSTALL_FULL_MANDIR")
    ap.add_argument("--unitdir", required=True, help="where the systemd unit goes")
    ap.add_argument("--envfile", required=True, help="where the environment file goes")
    args = ap.parse_args()
    work = tempdir("install-test-")
    try:
        paths = install(args, os.path.join(work, "destdir"))
        rev = check_versions(args, paths)
        check_front(paths, work)
        check_man_pages(args, paths)
        check_server_version(paths, rev, work)
    except TestFailure as e:
        print("FAIL", e)
        print("files kept in", work)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
