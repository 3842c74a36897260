#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""test_fetch_stages: the shape service/fetch/ promises (svc_fetch_impl.h,
docs/internals/adding-a-source.md), checked on its source:

- the stage driver svc_fetch_run (svc_fetch_run.c) names every stage of
  svc_fetch_stage, one case each;
- the files are leaves: between files of the room, calls go one way (no file
  calls a function of a file that calls one of its own, however indirectly);
  the driver's callbacks reach the stage files as function pointers only;
- the walk, queue and breakers drive providers through their ops: the
  debuginfod path "/buildid/" is written in svc_provider_debuginfod.c only."""
import os
import re
import sys

DEF = re.compile(r'^(?!static)[a-z_][\w \*]*?\b(svc_\w+)\s*\([^;{]*\)\s*\{', re.M)


def strip(text):
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    text = re.sub(r'//[^\n]*', ' ', text)
    return re.sub(r'"(\\.|[^"\\])*"', '""', text)


def main():
    room = os.path.join(sys.argv[1] if len(sys.argv) > 1 else ".", "service", "fetch")
    bad = []
    files = sorted(f for f in os.listdir(room) if f.endswith((".c", ".h")))
    text = {f: open(os.path.join(room, f), errors="replace").read() for f in files}

    for f in files:
        if "/buildid/" in text[f] and f != "svc_provider_debuginfod.c":
            bad.append("%s: writes the debuginfod path /buildid/ (the provider's only)" % f)

    impl = text["svc_fetch_impl.h"]
    enum = re.search(r'typedef enum svc_fetch_stage \{(.*?)\} svc_fetch_stage;', impl, re.S)
    stages = re.findall(r'\b(SVC_STAGE_\w+)', enum.group(1)) if enum else []
    run = re.search(r'void svc_fetch_run\(svc_fetch_flight \*fl\)\n\{(.*?)\n\}\n',
                    text["svc_fetch_run.c"], re.S)
    if not stages or not run:
        bad.append("svc_fetch_stage or svc_fetch_run not found")
    for st in stages:
        if run and len(re.findall(r'case ' + st + r'\b', run.group(1))) != 1:
            bad.append("svc_fetch_run: stage %s is not one case of the driver" % st)

    defs = {}
    for f in files:
        if f.endswith(".c"):
            for m in DEF.finditer(text[f]):
                defs[m.group(1)] = f
    calls = {f: set() for f in files if f.endswith(".c")}
    for f in calls:
        body = strip(text[f])
        for name, where in defs.items():
            if where != f and re.search(r'\b' + name + r'\s*\(', body):
                calls[f].add(where)

    def reaches(a, b):
        seen, todo = set(), [a]
        while todo:
            x = todo.pop()
            for y in calls[x]:
                if y == b:
                    return True
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        return False

    for a in sorted(calls):
        for b in sorted(calls[a]):
            if reaches(b, a):
                bad.append("%s calls into %s, which calls back into %s" % (a, b, a))
    for line in bad:
        print(line)
    print("%d files, %d stages, %d problems" % (len(files), len(stages), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
