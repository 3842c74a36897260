#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""compare_llvm.py: agreement of `symbolctl addr2line` with llvm-symbolizer.

Draws N addresses at random inside the functions of an ELF file (FUNC
symbols with a size from .symtab and .dynsym, which a separate debug file
keeps even though its .text is NOBITS), symbolizes them with both tools and
reports:

  innermost agreement: the innermost frame's function, file and line are equal;
  chain agreement:     every frame of the inline chain has equal function, file
                       and line (and the chains are equally long);
  columns:             the same, reported separately, for the columns too.

Function names count as equal when they are equal after dropping an
@VERSION / @@VERSION suffix, or when both are .symtab/.dynsym names of the
same address (glibc's `abort` and `__GI_abort`: llvm-symbolizer replaces the
outermost frame's DWARF name by one of the aliases, its own pick).

After that check, names also count as equal (each class counted and shown):
ours ending in "::" + llvm-symbolizer's bare DW_AT_name (ours qualified from the
DIE's parents, inlined frames included); llvm-symbolizer's mangled name
(--no-demangle) demangled by libiberty's c++filt, as ours is; another .symtab
name of the address (identical code folding, C1/C2 aliases) or its name part;
one clone named two ways; an assembler label where we show DW_AT_name. Where
llvm-symbolizer reads no name (DWARF in a dwz file, which llvm 14 cannot open),
eu-addr2line must give our innermost file:line and outermost function. An
address whose innermost line neither tool gives fails the run (--max-lines-alone).

The disagreements are listed (first --show of them) with both outputs and a
diagnosis; where llvm-symbolizer is provably the wrong one the diagnosis says
so and why. Exits 1 when innermost < --min-innermost or chain < --min-chain,
2 on a usage or tool error.

--ref-obj gives llvm-symbolizer another file with the same code, for what
llvm-symbolizer 14 cannot read (zstd-compressed sections, dwz files): the file
before that transformation. --peer replaces symbolctl by a peer tool, to test
this script itself. Python 3 standard library only.
"""

import argparse
import bisect
import os
import random
import re
import subprocess
import sys

TOOL_TIMEOUT = 1200  # seconds; a hang fails the test instead of blocking ctest

MANGLED_RE = re.compile(r"^_[ZR]")
# libiberty's spelling of clone suffixes: foo(int) [clone .isra.0] [clone .cold]
LIBIBERTY_CLONE_RE = re.compile(r"( \[clone \.[^\]]+\])+$")
VERSION_RE = re.compile(r"@@?[A-Za-z0-9_.]+$")
# Suffixes GCC gives to the parts and clones it makes of a function.
CLONE_RE = re.compile(r"((\.|  ?\(\.)(cold|part|isra|constprop|lto_priv|localalias|hot)"
                      r"(\.\d+)*\)?)+$")


def die(msg):
    print("compare_llvm: " + msg, file=sys.stderr)
    sys.exit(2)


def run(cmd, stdin_text=None):
    try:
        p = subprocess.run(cmd, input=stdin_text, capture_output=True, text=True,
                           timeout=TOOL_TIMEOUT, errors="replace")
    except FileNotFoundError:
        die("not found: " + cmd[0])
    except subprocess.TimeoutExpired:
        die("timed out after %ds: %s" % (TOOL_TIMEOUT, " ".join(cmd)))
    return p


def strip_version(name):
    return VERSION_RE.sub("", name)


class Symbols:
    """FUNC symbols of a file: ranges to draw from, and aliases by address."""

    def __init__(self, path, demangle):
        p = run(["readelf", "-sW", "--dyn-syms", path])
        if p.returncode != 0 and not p.stdout:
            die("readelf -sW %s failed: %s" % (path, p.stderr.strip()))
        names_at = {}      # start -> set of names (any defined symbol type)
        ranges = {}        # start -> largest size, FUNC/IFUNC with size > 0
        file_of = {}       # start of a LOCAL .symtab FUNC -> the STT_FILE before it
        labels = {}        # name of a size-0 symbol (an assembler label) -> its address
        table, cur_file = "", None
        for line in p.stdout.splitlines():
            if line.startswith("Symbol table '"):
                table, cur_file = line.split("'")[1], None
                continue
            f = line.split(None, 7)
            if len(f) >= 7 and f[3] == "FILE" and table == ".symtab":
                cur_file = f[7] if len(f) == 8 else None
                continue
            if len(f) < 8 or not f[0].endswith(":"):
                continue
            value, size, typ, ndx, name = f[1], f[2], f[3], f[6], f[7]
            if (table == ".symtab" and typ == "FUNC" and f[4] == "LOCAL" and cur_file
                    and ndx not in ("UND", "ABS")):
                file_of[int(value, 16)] = cur_file
            if ndx in ("UND", "ABS") or typ in ("FILE", "SECTION", "OBJECT", "TLS"):
                continue
            name = re.sub(r" \(\d+\)$", "", name)
            try:
                start = int(value, 16)
                size = int(size, 0) if size.startswith("0x") else int(size)
            except ValueError:
                continue
            if not name:
                continue
            names_at.setdefault(start, set()).add(name)
            if size == 0:
                labels.setdefault(strip_version(name), start)
            if typ in ("FUNC", "IFUNC") and size > 0:
                ranges[start] = max(size, ranges.get(start, 0))
        self.starts = sorted(ranges)
        self.sizes = [ranges[s] for s in self.starts]
        self.names_at = names_at
        self.file_of = file_of
        self.labels = labels
        self.demangled = {}
        if demangle:
            self._demangle(sorted({n for s in names_at.values() for n in s}))

    def _demangle(self, names):
        raw = [strip_version(n) for n in names]
        for tool in ("llvm-cxxfilt", "c++filt"):
            p = run([tool], "\n".join(raw) + "\n")
            out = p.stdout.split("\n")
            if p.returncode == 0 and len(out) >= len(raw):
                for n, d in zip(names, out):
                    if d != strip_version(n):
                        self.demangled.setdefault(n, set()).add(d)

    def demangle_one(self, name):
        """libiberty's demangling (c++filt) of name, cached; None if not mangled."""
        if not hasattr(self, "_dm_cache"):
            self._dm_cache = {}
        if name not in self._dm_cache:
            p = run(["c++filt"], name + "\n")
            d = p.stdout.rstrip("\n") if p.returncode == 0 else ""
            self._dm_cache[name] = d if d and d != name else None
        return self._dm_cache[name]

    def alias_form(self, a, addr):
        """Whether a is a .symtab name of a symbol containing addr (demangled,
        clone suffixes dropped), or the name part of one (without parameters)."""
        want = a.replace(" ", "")
        for n in self.aliases(addr):
            n = LIBIBERTY_CLONE_RE.sub("", CLONE_RE.sub("", n))
            if n.replace(" ", "") == want:
                return True
            part = name_part(n).replace(" ", "")
            # (after a return type: not after "::", which a bare name would pass)
            if part == want or (part.endswith(want) and part[-len(want) - 1] in " *&"):
                return True
        return False

    def containing(self, addr):
        """Starts of the FUNC ranges that contain addr (innermost last)."""
        i = bisect.bisect_right(self.starts, addr) - 1
        found = []
        # Ranges rarely nest; look back a few starts for an enclosing one.
        for j in range(i, max(i - 8, -1), -1):
            if self.starts[j] <= addr < self.starts[j] + self.sizes[j]:
                found.append(self.starts[j])
        return found

    def names_of(self, start):
        out = set()
        for n in self.names_at.get(start, ()):
            out.add(n)
            out.add(strip_version(n))
            out.update(self.demangled.get(n, ()))
        return out

    def same_symbol(self, a, b):
        """Whether a and b are two names of one address in .symtab/.dynsym."""
        if not hasattr(self, "_starts_by_name"):
            self._starts_by_name = {}
            for st in self.names_at:
                for n in self.names_of(st):
                    self._starts_by_name.setdefault(n, set()).add(st)
        sa = self._starts_by_name.get(a, set())
        sb = self._starts_by_name.get(b, set())
        return bool(sa & sb)

    def stt_file(self, addr):
        """The STT_FILE name before the local symbol that contains addr, if any."""
        for s in self.containing(addr):
            if s in self.file_of:
                return self.file_of[s]
        return None

    def aliases(self, addr):
        """Every name (raw, unversioned, demangled) of a symbol containing addr."""
        out = set()
        for s in self.containing(addr):
            for n in self.names_at.get(s, ()):
                out.add(n)
                out.add(strip_version(n))
                out.update(self.demangled.get(n, ()))
        return out

    def draw(self, n, rng):
        if not self.starts:
            die("no FUNC symbol with a size: nothing to draw addresses from")
        out = []
        for _ in range(n):
            k = rng.randrange(len(self.starts))
            out.append(self.starts[k] + rng.randrange(self.sizes[k]))
        return out


def llvm_blind(o, t, ok_k):
    """Whether the frames differ only where llvm-symbolizer has no function name."""
    if len(t) == 1 and t[0][0] == "??" and o[0][0] != "??":
        return True
    return (len(o) == len(t) and any(y[0] == "??" for y in t) and
            all(ok or (y[0] == "??" and (y[1] == "??" or x[1:3] == y[1:3]))
                for ok, x, y in zip(ok_k, o, t)))


def symbolize_eu(args, addrs):
    """eu-addr2line's (function, file, line) of each address, None when it has none."""
    text = "".join("0x%x\n" % a for a in addrs)
    p = run(["eu-addr2line", "-a", "-f", "-C", "-e", args.elf], text)
    out, cur = [], None
    lines = p.stdout.split("\n")
    i = 0
    while i < len(lines):
        if re.match(r"^0x[0-9a-f]+$", lines[i]):
            if i + 2 < len(lines):
                m = (re.match(r"^(.*):(\d+):\d+$", lines[i + 2]) or
                     re.match(r"^(.*):(\d+)$", lines[i + 2]))
                cur = (lines[i + 1], m.group(1), int(m.group(2))) if m else None
            out.append(cur if cur and cur[0] != "??" else None)
            i += 3
            continue
        i += 1
    if len(out) != len(addrs):
        print("compare_llvm: eu-addr2line: %d answers for %d addresses" % (len(out), len(addrs)),
              file=sys.stderr)
        return [None] * len(addrs)
    return out


def eu_agrees(cmp, addr, o, e):
    """eu-addr2line prints the .symtab function and the innermost line: ours
    must have that line innermost and that function outermost."""
    name, path, line = e
    if (o[0][1], o[0][2]) != (path, line):
        return False
    a, b = no_clone(o[-1][0]), no_clone(name)
    return (a == b or cmp.syms.alias_form(o[-1][0], addr) or a.endswith("::" + b) or
            name_part(b).replace(" ", "").endswith(name_part(a).replace(" ", "")))


def no_clone(n):
    """n without GCC's clone suffixes, in llvm's (.cold) or libiberty's ([clone .cold]) spelling."""
    return LIBIBERTY_CLONE_RE.sub("", CLONE_RE.sub("", n))


def name_part(n):
    """A demangled function name without its parameters and qualifiers."""
    n = re.sub(r"( const| volatile| &&| &| noexcept)+$", "", n)
    if not n.endswith(")"):
        return n
    depth = 0
    for i in range(len(n) - 1, -1, -1):
        if n[i] == ")":
            depth += 1
        elif n[i] == "(":
            depth -= 1
            if depth == 0:
                return n[:i]
    return n


def build_id(path):
    p = run(["readelf", "-n", path])
    m = re.search(r"Build ID: ([0-9a-f]+)", p.stdout)
    if not m:
        die("%s: no GNU build ID note" % path)
    return m.group(1)


def debug_file_of(path):
    """The separate debug file of an installed ELF file, by build ID."""
    bid = build_id(os.path.realpath(path))
    dbg = "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])
    if not os.path.exists(dbg):
        die("no debug file %s for %s (build ID %s): install its -dbg package "
            "(libc6-dbg for libc.so.6)" % (dbg, path, bid))
    return dbg


def parse_llvm_format(text, n, what):
    """Blocks of (function, file:line:column) pairs separated by empty lines."""
    lines = text.split("\n")
    blocks, cur, i = [], [], 0
    while i < len(lines) and len(blocks) < n:
        ln = lines[i]
        if ln == "":
            if cur:
                blocks.append(cur)
                cur = []
            i += 1
            continue
        if i + 1 >= len(lines):
            die("%s: truncated output at line %d" % (what, i + 1))
        cur.append(parse_frame(ln, lines[i + 1], with_column=True))
        i += 2
    if cur:
        blocks.append(cur)
    if len(blocks) != n:
        die("%s: %d answers for %d addresses" % (what, len(blocks), n))
    return blocks


def parse_frame(func, loc, with_column):
    """file:line:column (llvm) or file:line [(discriminator N)] (binutils);
    the file may itself contain ':'."""
    m = re.match(r"^(.*):(\d+|\?):(\d+|\?)$", loc) if with_column else None
    if m:
        path, line, col = m.group(1), m.group(2), m.group(3)
    else:
        m = re.match(r"^(.*):(\d+|\?)(?: \(discriminator \d+\))?$", loc)
        if not m:
            return (func, loc, 0, None)
        path, line, col = m.group(1), m.group(2), None
    line = 0 if line == "?" else int(line)
    col = None if col is None else (0 if col == "?" else int(col))
    if path == "??":
        line, col = 0, (0 if with_column else None)
    return (func, path, line, col)


def parse_binutils(text, addrs):
    """addr2line -a -f -i: an 0x address line, then (function, file:line) pairs."""
    blocks = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].startswith("0x") and len(lines[i]) == 18:
            blocks.append([])
            i += 1
            continue
        if lines[i] == "":
            i += 1
            continue
        f, loc = lines[i], lines[i + 1] if i + 1 < len(lines) else "??:0"
        fr = parse_frame(f, loc, with_column=False)
        if fr[1] == "??":
            fr = (fr[0], "??", 0, None)
        blocks[-1].append(fr)
        i += 2
    if len(blocks) != len(addrs):
        die("addr2line: %d answers for %d addresses" % (len(blocks), len(addrs)))
    return blocks


def llvm_cmd(args, obj, extra=()):
    cmd = [args.llvm_symbolizer, "--obj=" + obj]
    cmd.append("--no-inlines" if args.no_inlines else "--inlining")
    if args.no_demangle:
        cmd.append("--no-demangle")
    cmd.extend(extra)
    return cmd


def symbolize_llvm(args, obj, addrs, extra=()):
    text = "".join("0x%x\n" % a for a in addrs)
    p = run(llvm_cmd(args, obj, extra), text)
    if p.returncode != 0:
        die("llvm-symbolizer exited %d: %s" % (p.returncode, p.stderr.strip()[:2000]))
    if p.stderr.strip():
        print("llvm-symbolizer stderr (first lines):\n  " +
              "\n  ".join(p.stderr.strip().split("\n")[:5]), file=sys.stderr)
    return parse_llvm_format(p.stdout, len(addrs), "llvm-symbolizer")


def symbolize_ours(args, addrs):
    text = "".join("0x%x\n" % a for a in addrs)
    if args.peer == "llvm":
        return symbolize_llvm(args, args.elf, addrs)
    if args.peer == "binutils":
        cmd = ["addr2line", "-a", "-f", "-e", args.elf]
        if not args.no_inlines:
            cmd.append("-i")
        if not args.no_demangle:
            cmd.append("-C")
        p = run(cmd, text)
        if p.returncode != 0:
            die("addr2line exited %d: %s" % (p.returncode, p.stderr.strip()[:2000]))
        return parse_binutils(p.stdout, addrs)
    cmd = [args.symbolctl, "addr2line", "-e", args.elf]
    if args.alt:
        cmd += ["--alt", args.alt]
    if args.no_inlines:
        cmd.append("--no-inlines")
    if args.no_demangle:
        cmd.append("--no-demangle")
    p = run(cmd, text)
    if p.returncode != 0:
        die("symbolctl exited %d: %s" % (p.returncode, p.stderr.strip()[:2000]))
    return parse_llvm_format(p.stdout, len(addrs), "symbolctl")


def fmt_block(frames):
    out = []
    for f, path, line, col in frames:
        out.append("      %s" % (f if len(f) <= 240 else f[:200] + " ... " + f[-35:]))
        out.append("      %s:%d:%s" % (path, line, "-" if col is None else col))
    return "\n".join(out)


class Comparer:
    def __init__(self, args, syms, ref):
        self.args, self.syms, self.ref = args, syms, ref

    def name_eq(self, a, b, addr):
        """The issue's rule: equal without @VERSION, or both .symtab names of the address."""
        if a == b or strip_version(a) == strip_version(b):
            return True
        al = self.syms.aliases(addr)
        return a in al and b in al

    def strict_frame_eq(self, x, y, addr):
        return self.name_eq(x[0], y[0], addr) and x[1] == y[1] and x[2] == y[2]

    def explain(self, cands, ours, theirs):
        """For addresses that differ by the issue's rule, extra runs that tell
        the differences that are not ours: llvm-symbolizer's .symtab override of
        the outermost name, and two demanglers' spellings of one linkage name."""
        addrs = [a for a, _, _ in cands]
        # With inlines even under --no-inlines: its last frame is the DWARF
        # subprogram (under --no-inlines llvm-symbolizer's short name is the
        # innermost inlined function's, which it then replaces by the .symtab one).
        saved = self.args.no_inlines
        self.args.no_inlines = False
        try:
            short = symbolize_llvm(self.args, self.ref, addrs, ["--functions=short"])
        finally:
            self.args.no_inlines = saved
        if self.args.no_demangle:
            return short, None, None
        saved = self.args.no_demangle
        self.args.no_demangle = True
        try:
            t_mangled = symbolize_llvm(self.args, self.ref, addrs)
            o_mangled = symbolize_ours(self.args, addrs)
        finally:
            self.args.no_demangle = saved
        return short, o_mangled, t_mangled

    def name_verdict(self, k, addr, o, t, sh, om, tm):
        """'eq', 'qualified', 'libiberty', 'alias', 'label', 'spelling',
        'demangle-failure', 'override' or 'diff' for frame k."""
        a, b = o[k][0], t[k][0]
        if self.name_eq(a, b, addr):
            return "eq"
        nb = no_clone(b)
        if (a.endswith("::" + b) or a.endswith("::" + nb) or
                ("(" not in nb and name_part(a).endswith("::" + nb))):
            # Ours qualified from the DIE's parents where llvm-symbolizer prints
            # DWARF's bare DW_AT_name (inlined frames, functions without a
            # linkage name): the same function, more fully named.
            return "qualified"
        same_len = om is not None and tm is not None and len(om) == len(o) and len(tm) == len(t)
        if no_clone(a) == no_clone(b):
            # One function, its clone named differently: ours from DWARF (the
            # clone's linkage name, foo [clone .constprop.0]), llvm-symbolizer's
            # from .symtab (that clone's .cold part, foo.constprop.0.cold).
            return "clone"
        if same_len and MANGLED_RE.match(tm[k][0]):
            # llvm-symbolizer's mangled name, demangled by libiberty as ours is.
            dm = self.syms.demangle_one(strip_version(tm[k][0]))
            if dm and (a == dm or a == LIBIBERTY_CLONE_RE.sub("", dm)):
                return "libiberty"
        if k == len(t) - 1 and self.syms.alias_form(a, addr):
            # Outermost: ours is (the name part of) another .symtab name of the
            # address: identical code folded, or C1/C2 constructor aliases.
            return "alias"
        if (same_len and self.name_eq(om[k][0], tm[k][0], addr) and om[k][0] != a):
            # The same linkage name, which we demangled: either LLVM's demangler
            # spells it differently or it failed and printed it mangled.
            if tm[k][0] == b and not MANGLED_RE.match(b):
                # Not a mangled name: an assembler label (glibc's __GI_foo), which
                # llvm-symbolizer prints and we keep as the system name, showing
                # DWARF's DW_AT_name, the name the source calls.
                return "label"
            return "demangle-failure" if tm[k][0] == b and b.startswith("_Z") else "spelling"
        if k == len(t) - 1 and b in self.syms.aliases(addr):
            # llvm-symbolizer replaced the outermost name by the .symtab name b.
            # Proven when ours is b without a clone suffix (foo for foo.cold), also
            # in the linkage names, or another .symtab name of that same entry, or
            # exactly the DW_AT_name llvm-symbolizer itself reads from DWARF.
            base = CLONE_RE.sub("", b)
            if self.name_eq(base, a, addr) or self.syms.same_symbol(a, base):
                return "override"
            if (om is not None and tm is not None and len(om) == len(o) and len(tm) == len(t)
                    and CLONE_RE.sub("", tm[k][0]) == om[k][0]):
                return "override"
            # Ours bare where llvm-symbolizer's .symtab name is qualified is ours
            # to fix (issue 10: qualified names), not an llvm-symbolizer quirk.
            if (sh and (self.args.no_inlines or len(sh) == len(t)) and sh[-1][0] == a and
                    ("::" not in CLONE_RE.sub("", b) or "::" in a)):
                return "override"
            # Ours is that DW_AT_name qualified from the DIE's parents.
            if (sh and (self.args.no_inlines or len(sh) == len(t)) and
                    a.endswith("::" + sh[-1][0])):
                return "override"
        return "diff"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("elf", nargs="?",
                    help="ELF file (binary, shared library or separate debug file)")
    ap.add_argument("--debug-for", metavar="FILE",
                    help="instead of ELF: the debug file of FILE found by its build ID "
                         "under /usr/lib/debug/.build-id (e.g. libc.so.6 and libc6-dbg)")
    ap.add_argument("--symbolctl", help="path of symbolctl")
    ap.add_argument("--peer", choices=["llvm", "binutils"],
                    help="compare this peer instead of symbolctl (self-test of this script)")
    ap.add_argument("--alt", help="dwz supplementary file, passed to symbolctl")
    ap.add_argument("--ref-obj", help="file llvm-symbolizer reads instead of ELF (same code)")
    ap.add_argument("--llvm-symbolizer", default="llvm-symbolizer")
    ap.add_argument("-n", "--count", type=int, default=2000, help="addresses (default 2000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--min-innermost", type=float, default=99.5)
    ap.add_argument("--min-chain", type=float, default=99.0)
    ap.add_argument("--max-lines-alone", type=int, default=0,
                    help="addresses whose innermost file:line neither llvm-symbolizer nor "
                         "eu-addr2line gives (default 0)")
    ap.add_argument("--no-inlines", action="store_true", help="both tools without inline frames")
    ap.add_argument("--no-demangle", action="store_true", help="both tools without demangling")
    ap.add_argument("--no-qualified", action="store_true",
                    help="a name ours qualifies where llvm-symbolizer's is bare is a "
                         "disagreement (a fixture whose functions are in no namespace)")
    ap.add_argument("--show", type=int, default=30, help="disagreements to list (default 30)")
    ap.add_argument("--count-env", default="COMPARE_LLVM_COUNT",
                    help="environment variable that overrides -n when set")
    args = ap.parse_args()
    if not args.peer and not args.symbolctl:
        die("--symbolctl PATH (or --peer) is required")
    if args.debug_for:
        args.elf = debug_file_of(args.debug_for)
    if not args.elf:
        die("an ELF file (or --debug-for FILE) is required")
    for f in [args.elf, args.alt, args.ref_obj, args.symbolctl]:
        if f and not os.path.exists(f):
            die("no such file: " + f)
    env_n = os.environ.get(args.count_env)
    if env_n:
        args.count = int(env_n)

    syms = Symbols(args.elf, demangle=not args.no_demangle)
    rng = random.Random(args.seed)
    addrs = syms.draw(args.count, rng)
    ref = args.ref_obj or args.elf
    cmp = Comparer(args, syms, ref)

    theirs = symbolize_llvm(args, ref, addrs)
    ours = symbolize_ours(args, addrs)

    n = len(addrs)
    s_inner = s_chain = 0
    cands = []
    for addr, o, t in zip(addrs, ours, theirs):
        i_ok = cmp.strict_frame_eq(o[0], t[0], addr)
        c_ok = len(o) == len(t) and all(cmp.strict_frame_eq(x, y, addr) for x, y in zip(o, t))
        s_inner += i_ok
        s_chain += c_ok
        if not c_ok:
            cands.append((addr, o, t))

    g_inner, g_chain = s_inner, s_chain
    explained = {}   # class -> [count, example]
    bad = []         # (addr, o, t, innermost_ok, class, why)
    blind = []       # llvm-symbolizer without a name for some frame: asked of eu-addr2line
    if cands:
        short, om_all, tm_all = cmp.explain(cands, ours, theirs)
        for i, (addr, o, t) in enumerate(cands):
            sh = short[i]
            om = om_all[i] if om_all else None
            tm = tm_all[i] if tm_all else None
            verdicts = [cmp.name_verdict(k, addr, o, t, sh, om, tm)
                        for k in range(min(len(o), len(t)))]
            if args.no_qualified:
                verdicts = ["diff" if v == "qualified" else v for v in verdicts]
            loc_ok = [o[k][1:3] == t[k][1:3] for k in range(len(verdicts))]
            ok_k = [v != "diff" and l for v, l in zip(verdicts, loc_ok)]
            i_strict = cmp.strict_frame_eq(o[0], t[0], addr)
            i_ok = bool(ok_k) and ok_k[0]
            c_ok = len(o) == len(t) and all(ok_k)
            if i_ok and not i_strict:
                g_inner += 1
            if c_ok:
                g_chain += 1
                for cls in sorted({v for v in verdicts if v not in ("eq",)}):
                    name = {"spelling": "demangler-spelling", "label": "llvm-asm-label",
                            "qualified": "ours-qualified", "libiberty": "llvm-demangler",
                            "alias": "symtab-alias", "clone": "clone-suffix",
                            "demangle-failure": "llvm-wrong-not-demangled",
                            "override": "llvm-symtab-override"}[cls]
                    if cls == "override" and CLONE_RE.search(t[-1][0]):
                        name = "llvm-wrong-clone-name"
                    e = explained.setdefault(name, [0, addr, o, t])
                    e[0] += 1
                continue
            if llvm_blind(o, t, ok_k):
                blind.append((addr, o, t, i_ok, verdicts, loc_ok))
                continue
            cls, why = diagnose(cmp, addr, o, t, verdicts, loc_ok)
            bad.append((addr, o, t, i_ok, cls, why))
        # Where llvm-symbolizer reads no name (a dwz file it cannot open),
        # eu-addr2line (elfutils, which does) is the other witness.
        eu = symbolize_eu(args, [b[0] for b in blind]) if blind else []
        for (addr, o, t, i_ok, verdicts, loc_ok), e in zip(blind, eu):
            if e and eu_agrees(cmp, addr, o, e):
                g_inner += not i_ok
                g_chain += 1
                ex = explained.setdefault("llvm-unread-eu-agrees", [0, addr, o, t])
                ex[0] += 1
                continue
            cls, why = diagnose(cmp, addr, o, t, verdicts, loc_ok)
            bad.append((addr, o, t, i_ok, cls, why))

    pct = lambda k: 100.0 * k / n
    who = args.peer or "symbolctl"
    col_ok = sum(1 for o, t in zip(ours, theirs)
                 if len(o) == len(t) and all(x[3] == y[3] for x, y in zip(o, t)))
    print("compare_llvm: %s vs llvm-symbolizer on %s%s, %d addresses (seed %d)%s%s" % (
        who, args.elf, " (llvm-symbolizer reads %s)" % ref if ref != args.elf else "",
        n, args.seed, " --no-inlines" if args.no_inlines else "",
        " --no-demangle" if args.no_demangle else ""))
    print("  innermost frame (function, file, line): %6.2f%%  (%d/%d, min %.1f%%; "
          "by the names rule alone %.2f%%)" % (pct(g_inner), g_inner, n, args.min_innermost,
                                               pct(s_inner)))
    print("  whole inline chain:                     %6.2f%%  (%d/%d, min %.1f%%; "
          "by the names rule alone %.2f%%)" % (pct(g_chain), g_chain, n, args.min_chain,
                                               pct(s_chain)))
    print("  columns equal too (all frames):         %6.2f%%  (%d/%d, reported, not a gate)" % (
        pct(col_ok), col_ok, n))
    if explained:
        print("  counted as agreeing after a check (llvm-symbolizer's own quirks):")
        for name, (cnt, addr, o, t) in sorted(explained.items()):
            print("    %-22s %5d  %s" % (name, cnt, EXPLAINED_WHY[name]))
            print("      e.g. 0x%x: ours %r, llvm-symbolizer %r" % (
                addr, short_name(o[-1][0] if "demangl" not in name and "label" not in name else
                                 first_diff_name(o, t)[0]),
                short_name(t[-1][0] if "demangl" not in name and "label" not in name else
                           first_diff_name(o, t)[1])))
    # A line is ours alone when neither llvm-symbolizer nor eu-addr2line gives it.
    mine = [(a, o) for a, o, t in zip(addrs, ours, theirs)
            if o[0][2] != 0 and o[0][1:3] != t[0][1:3]]
    eu_mine = symbolize_eu(args, [a for a, _ in mine]) if mine and not args.peer else []
    alone = [(a, o) for (a, o), e in zip(mine, eu_mine) if not e or e[1:3] != o[0][1:3]]
    eu_at = {a: e for (a, _), e in zip(mine, eu_mine)}
    print("  lines neither llvm-symbolizer nor eu-addr2line gives: %d (max %d)" % (
        len(alone), args.max_lines_alone))
    for a, o in alone[:args.show]:
        print("    0x%x  %s:%d" % (a, o[0][1], o[0][2]))
    # A line llvm-symbolizer does not give but eu-addr2line does, as ours.
    bad = [(a, o, t, i, "llvm-line-differs-eu-agrees"
            if c == "differs" and eu_at.get(a) and eu_at[a][1:3] == o[0][1:3] else c, w)
           for a, o, t, i, c, w in bad]
    if bad:
        by_class = {}
        for b in bad:
            by_class[b[4]] = by_class.get(b[4], 0) + 1
        print("  disagreements: %d  by diagnosis: %s" % (
            len(bad), ", ".join("%s %d" % kv for kv in sorted(by_class.items()))))
        # Up to --show in all, shared among the diagnoses so each one has examples;
        # one line each for the rest of a diagnosis' first --show.
        per = max(2, args.show // max(1, len(by_class)))
        shown = 0
        for c in sorted(by_class):
            items = [b for b in bad if b[4] == c]
            print("  -- %s: %d" % (c, len(items)))
            for j, (addr, o, t, i_ok, cls, why) in enumerate(items[:args.show]):
                if j < per and shown < args.show:
                    shown += 1
                    e = eu_at.get(addr)
                    print("  0x%x  [%s] %s%s%s" % (addr, cls, why,
                                                   "" if i_ok else "  (innermost differs)",
                                                   "; eu-addr2line: %s:%d%s" % (
                                                       e[1], e[2], " (= ours)" if
                                                       e[1:3] == o[0][1:3] else "")
                                                   if e else ""))
                    print("    %s:\n%s" % (who, fmt_block(o)))
                    print("    llvm-symbolizer:\n%s" % fmt_block(t))
                else:
                    print("  0x%x  [%s] %s" % (addr, cls, why[:150]))
            if len(items) > args.show:
                print("  ... %d more [%s]" % (len(items) - args.show, c))
    ok = (pct(g_inner) >= args.min_innermost and pct(g_chain) >= args.min_chain and
          len(alone) <= args.max_lines_alone)
    print("compare_llvm: %s" % ("PASS" if ok else "FAIL"))
    return 0 if ok else 1


EXPLAINED_WHY = {
    "demangler-spelling": "same linkage name; libiberty and LLVM's demangler spell it "
                          "differently (checked with --no-demangle on both sides)",
    "ours-qualified": "ours is llvm-symbolizer's bare DW_AT_name qualified by the DIE's "
                      "namespaces and classes (ours ends in '::' + llvm-symbolizer's)",
    "llvm-demangler": "llvm-symbolizer's mangled name (--no-demangle) demangled by libiberty, "
                      "as ours is, equals ours (LLVM 14's demangler spells or fails otherwise)",
    "symtab-alias": "ours is another .symtab name of the same code (identical code folding, "
                    "C1/C2 constructor aliases), or its name without parameters",
    "llvm-unread-eu-agrees": "llvm-symbolizer 14 has no name for a frame (DWARF in a dwz file "
                             "it cannot read); eu-addr2line gives our innermost file:line and "
                             "our outermost function; the frames llvm-symbolizer reads agree",
    "clone-suffix": "the same function; ours names the clone from DWARF, llvm-symbolizer "
                    "from .symtab (a part of that clone: foo.constprop.0.cold)",
    "llvm-asm-label": "same linkage name, an assembler label (C's asm(\"__GI_foo\")); "
                      "llvm-symbolizer prints the label, we print DW_AT_name, the source "
                      "name (checked with --no-demangle on both sides)",
    "llvm-wrong-not-demangled": "LLVM's demangler failed on a valid linkage name and "
                                "llvm-symbolizer printed it mangled; ours is libiberty's "
                                "demangling of that same name (checked with --no-demangle)",
    "llvm-symtab-override": "llvm-symbolizer replaced the outermost DWARF name by a .symtab "
                            "name of the address; ours is DWARF's DW_AT_name, which its "
                            "--functions=short prints, or another .symtab name of that entry",
    "llvm-wrong-clone-name": "llvm-symbolizer names the outermost frame by the .symtab name of "
                             "a compiler-made part/clone (foo.cold, foo.isra.0); ours is "
                             "that name without the suffix: DWARF's subprogram",
}


def short_name(s):
    return s if len(s) <= 100 else s[:60] + "..." + s[-30:]


def first_diff_name(o, t):
    for x, y in zip(o, t):
        if x[0] != y[0]:
            return x[0], y[0]
    return o[0][0], t[0][0]


def diagnose(cmp, addr, o, t, verdicts, loc_ok):
    """(class, why) of a real disagreement. Classes named llvm-wrong-* are the
    ones where llvm-symbolizer is provably the wrong one."""
    syms = cmp.syms
    al = syms.aliases(addr)
    starts = syms.containing(addr)
    if starts:
        nm = sorted(syms.names_at.get(starts[0], {"?"}))[0]
        sym = "%s [0x%x, 0x%x)" % (nm, starts[0],
                                    starts[0] + syms.sizes[syms.starts.index(starts[0])])
    else:
        sym = "no symbol"
    tf, of = t[0][0], o[0][0]
    if tf == "??" and of != "??":
        if of in al or strip_version(of) in al:
            return ("llvm-wrong-no-answer", "llvm-symbolizer has no function, but .symtab "
                    "%s contains the address and has our name" % sym)
        return ("llvm-no-answer", "llvm-symbolizer has no function; .symtab: %s" % sym)
    if of == "??" and tf != "??":
        return ("ours-no-answer", "we have no function, llvm-symbolizer has one; .symtab: %s"
                % sym)
    if (len(o) == len(t) and o[-1][1:3] == t[-1][1:3] and starts and
            strip_version(t[-1][0]) in syms.labels and
            starts[0] < syms.labels[strip_version(t[-1][0])] <= addr and
            o[-1][0] in syms.names_of(starts[0])):
        return ("llvm-wrong-inner-label", "llvm-symbolizer names the frame by %r, a size-0 "
                "label at 0x%x inside the sized FUNC %s, whose name we print"
                % (t[-1][0], syms.labels[strip_version(t[-1][0])], sym))
    if (len(o) == 1 and len(t) == 1 and o[0][1] == "??" and t[0][1] != "??" and t[0][2] == 0
            and (cmp.name_eq(of, tf, addr) or cmp.name_eq(of, CLONE_RE.sub("", tf), addr) or
                 of.endswith("::" + no_clone(tf)))
            and syms.stt_file(addr) == t[0][1]):
        return ("llvm-stt-file", "llvm-symbolizer takes the file name from the STT_FILE "
                "symbol before the local symbol in .symtab (line 0); we print ??")
    if (len(o) == len(t) and all(x[1] != "??" and y[1] == "??" and y[2] == 0 for x, y in
                                 zip(o[:1], t[:1])) and cmp.name_eq(of, tf, addr)):
        return ("ours-line-outside-sequence", "llvm-symbolizer has no line-table row for the "
                "address (??:0:0) and we print one: likely a row of a sequence that ended "
                "before it (end_sequence not honoured), e.g. code without DWARF after a CU")
    if len(o) != len(t):
        return ("chain-length", "%d frames vs llvm-symbolizer's %d" % (len(o), len(t)))
    diffs = []
    for k, (x, y) in enumerate(zip(o, t)):
        if verdicts[k] == "diff":
            diffs.append("frame %d function" % k)
        if x[1] != y[1]:
            if os.path.normpath(x[1]) == os.path.normpath(y[1]):
                diffs.append("frame %d file spelling" % k)
            else:
                diffs.append("frame %d file" % k)
        if x[2] != y[2]:
            diffs.append("frame %d line" % k)
    if diffs and all("file spelling" in d for d in diffs):
        return ("path-spelling", ", ".join(diffs))
    return ("differs", ", ".join(diffs) or "?")


if __name__ == "__main__":
    sys.exit(main())
