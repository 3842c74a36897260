#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The files of deploy/ checked offline with the best checkers Debian has, and
against the real programs.

    deploy_test.py --symbolizerd BIN --symbolctl BIN --symbolctl-full BIN --source DIR [CASE...]

Cases: the systemd unit passes `systemd-analyze verify` and `security --offline`
(started under systemd only where systemd is PID 1: skipped otherwise, with the
reason); the environment file documents every flag of `symbolizerd --help` with
its default, and the daemon starts with each documented value and with the
unit's command line; the Containerfile's runtime packages are those of the
libraries the built programs link (`readelf`, `ldd`, `dpkg -S`), since no
container engine runs here to build it; the Kubernetes manifests pass yamllint
and `kubectl kustomize`, then a check of the fields Kubernetes requires and of
their references (kubectl validates schemas only against a server); the
Prometheus files pass `promtool check config`, `check rules` and `test rules`;
the Grafana dashboard is valid JSON (jq) with PromQL promtool parses; every
metric named by the dashboard and the alerts is in a running daemon's /metrics.

Nothing here talks to anything but 127.0.0.1.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_lib import Daemon  # noqa: E402
from upstream_lib import TestFailure, check, free_port, run_cases, tempdir  # noqa: E402

import yaml  # noqa: E402  (python3-yaml)

# Flags of --help that are not settings.
NOT_SETTINGS = {"--help", "--version"}
# RSS of the daemon under sustained load, from the benchmarks (deploy/README.md, Kubernetes).
BASE_RSS = 70 << 20
SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40,
              "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}


def run(cmd, cwd=None, ok=True, env=None):
    """(returncode, stdout + stderr) of a checker; a failure when ok and rc != 0."""
    tool = shutil.which(cmd[0])
    check(tool, "%s is not installed (scripts/install-deps.sh installs it)" % cmd[0])
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    out = p.stdout + p.stderr
    check(not ok or p.returncode == 0, "%s failed (%d):\n%s" % (" ".join(cmd), p.returncode, out))
    return p.returncode, out


def size_bytes(s):
    m = re.fullmatch(r"(\d+)([KMGT]i?)?", s)
    check(m, "size %r" % s)
    return int(m.group(1)) * SIZE_UNITS[m.group(2) or ""]


def help_entries(symbolizerd):
    """{flag: text of its --help entry} in --help order."""
    out = subprocess.run([symbolizerd, "--help"], capture_output=True, text=True).stdout
    entries, cur = {}, None
    for line in out.splitlines():
        m = re.match(r"\s+(?:-\w, )?(--[a-z0-9][a-z0-9-]*)", line)
        if m:
            cur = m.group(1)
            entries[cur] = line
        elif cur and line.startswith("    ") and line.strip():
            entries[cur] += " " + line.strip()
        else:
            cur = None
    check(len(entries) > 10, "symbolizerd --help lists %d flags:\n%s" % (len(entries), out))
    return entries


def env_file_vars(path):
    """KEY=VALUE assignments of an EnvironmentFile (comments skipped)."""
    env = {}
    for line in open(path):
        line = line.strip()
        if line and not line.startswith("#"):
            k, _, v = line.partition("=")
            env[k.strip()] = v.strip().strip('"')
    return env


def start_with(args, work, name, flags):
    """A daemon on 127.0.0.1:0 with flags (their --listen and --data-dir replaced)
    that must start and answer /healthz; stopped with exit 0."""
    joined = []
    for f in flags:  # `--flag VALUE` as `--flag=VALUE`
        if joined and joined[-1].startswith("--") and "=" not in joined[-1] \
                and not f.startswith("--"):
            joined[-1] += "=" + f
        else:
            joined.append(f)
    flags = [f for f in joined if not re.match(r"--(listen|data-dir)=", f)]
    d = Daemon(args.symbolizerd, os.path.join(work, name + ".data"),
               os.path.join(work, name + ".log"), extra=flags)
    try:
        with urllib.request.urlopen(d.url + "/healthz", timeout=10) as r:
            check(r.status == 200, "%s: /healthz %d" % (name, r.status))
    finally:
        rc = d.stop()
    check(rc == 0, "%s: exit %d:\n%s" % (name, rc, d.log_text()))


def unit_with_binary(args, work):
    """A copy of the unit whose ExecStart names the built binary."""
    src = os.path.join(args.source, "deploy/systemd/symbolizerd.service")
    text = open(src).read()
    check("ExecStart=/usr/bin/symbolizerd " in text, "ExecStart is not /usr/bin/symbolizerd")
    os.makedirs(os.path.join(work, "unit"), exist_ok=True)
    dst = os.path.join(work, "unit", "symbolizerd.service")
    open(dst, "w").write(text.replace("ExecStart=/usr/bin/symbolizerd ",
                                      "ExecStart=%s " % os.path.abspath(args.symbolizerd)))
    return text, dst


def case_systemd_verify(args, work):
    text, unit = unit_with_binary(args, work)
    for want in ("DynamicUser=yes", "StateDirectory=symbolizer", "ProtectSystem=strict",
                 "ProtectHome=yes", "PrivateTmp=yes", "NoNewPrivileges=yes",
                 "CapabilityBoundingSet=\n", "MemoryDenyWriteExecute=yes",
                 "SystemCallFilter=@system-service", "EnvironmentFile=-/etc/default/symbolizerd",
                 "--data-dir %S/symbolizer", "--listen ${SYMBOLIZERD_LISTEN}"):
        check(want in text, "the unit lacks %r" % want)
    # The unit's Documentation= is checked too: the man pages as installed
    # (MANPATH names a copy in the layout `cmake --install` gives them).
    man = os.path.join(work, "man")
    for page, sect in (("symbolizerd", "8"), ("symbolctl", "1")):
        os.makedirs(os.path.join(man, "man" + sect), exist_ok=True)
        shutil.copy(os.path.join(args.source, "man", "%s.%s" % (page, sect)),
                    os.path.join(man, "man" + sect))
    check("Documentation=man:symbolizerd(8)" in text, "Documentation= names the wrong page")
    rc, out = run(["systemd-analyze", "verify", unit], env=dict(os.environ, MANPATH=man))
    check(not out.strip(), "systemd-analyze verify is not clean:\n" + out)
    _, out = run(["systemd-analyze", "security", "--offline=yes", "--threshold=20", unit])
    m = re.search(r"Overall exposure level for \S+: ([\d.]+)", out)
    print("  systemd-analyze verify: clean; security exposure %s (threshold 2.0)"
          % (m.group(1) if m else "?"))


def case_systemd_start(args, work):
    """The unit started by the machine's systemd, where there is one."""
    pid1 = open("/proc/1/comm").read().strip()
    if not os.path.isdir("/run/systemd/system"):
        print("  skip: PID 1 is %r, not systemd: no systemd-run or systemctl start here" % pid1)
        return
    if os.geteuid() != 0:
        print("  skip: systemd is PID 1 but the test is not root: cannot install a system unit")
        return
    name = "symbolizerd-deploytest-%d" % os.getpid()
    # A copy of the binary where the transient user can read it (not under /home,
    # /root or /tmp, which the unit hides).
    bindir = "/run/" + name
    os.makedirs(bindir, mode=0o755)
    shutil.copy(args.symbolizerd, bindir + "/symbolizerd")
    os.chmod(bindir + "/symbolizerd", 0o755)
    port = free_port()
    text = open(os.path.join(args.source, "deploy/systemd/symbolizerd.service")).read()
    text = text.replace("ExecStart=/usr/bin/symbolizerd ", "ExecStart=%s/symbolizerd " % bindir)
    text = text.replace("EnvironmentFile=-/etc/default/symbolizerd", "EnvironmentFile=-%s/env" % bindir)
    text = text.replace("StateDirectory=symbolizer\n", "StateDirectory=%s\n" % name)
    text = text.replace("%S/symbolizer ", "%%S/%s " % name)
    open(bindir + "/env", "w").write(
        "SYMBOLIZERD_LISTEN=127.0.0.1:%d\nSYMBOLIZERD_ARGS=--debug-dir= "
        "--debuginfod-upstream-servers=\n" % port)
    path = "/run/systemd/system/%s.service" % name
    open(path, "w").write(text)
    try:
        run(["systemctl", "daemon-reload"])
        run(["systemctl", "start", name])
        deadline, ok = time.monotonic() + 30, False
        while time.monotonic() < deadline and not ok:
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/healthz" % port, timeout=2) as r:
                    ok = r.status == 200
            except OSError:
                time.sleep(0.2)
        _, status = run(["systemctl", "status", "--no-pager", "-l", name], ok=False)
        check(ok, "the unit did not serve /healthz:\n" + status)
        run(["systemctl", "stop", name])
        _, res = run(["systemctl", "show", "-p", "Result", "--value", name])
        check(res.strip() == "success", "the unit stopped with result %r:\n%s" % (res.strip(), status))
        print("  started under systemd, /healthz answered, stopped cleanly")
    finally:
        subprocess.run(["systemctl", "stop", name], capture_output=True)
        os.unlink(path)
        subprocess.run(["systemctl", "daemon-reload"], capture_output=True)
        subprocess.run(["systemctl", "clean", "--what=state", name], capture_output=True)
        shutil.rmtree(bindir, ignore_errors=True)


def case_env_file(args, work):
    path = os.path.join(args.source, "deploy/symbolizerd.env")
    text = open(path).read()
    documented = dict(re.findall(r"^#\s+(--[a-z0-9-]+)=(\S*)", text, re.M))
    entries = help_entries(args.symbolizerd)
    missing = [f for f in entries if f not in NOT_SETTINGS and f not in documented]
    check(not missing, "flags of symbolizerd --help missing in %s: %s" % (path, " ".join(missing)))
    # The default --help gives in parentheses, where it gives one.
    for flag, entry in entries.items():
        defaults = re.findall(r"\(([^()\s:;]+)\)", entry[len(flag) + 2:])
        if flag in documented and defaults:
            check(documented[flag] in defaults, "%s: %s documents %r, --help says %r"
                  % (path, flag, documented[flag], defaults))
    # Every documented value starts the daemon (placeholders left out).
    values = ["%s=%s" % (f, v) for f, v in documented.items()
              if v and not re.search(r"[A-Z]{3}", v)]
    start_with(args, work, "env-documented",
               values + ["--debug-dir=", "--debuginfod-upstream-servers="])
    # The unit's command line, as systemd expands it with this file (and its example).
    env = env_file_vars(path)
    unit = open(os.path.join(args.source, "deploy/systemd/symbolizerd.service")).read()
    exec_start = re.search(r"^ExecStart=\S+ (.*)$", unit, re.M).group(1)
    listen = re.search(r"^Environment=SYMBOLIZERD_LISTEN=(\S+)", unit, re.M).group(1)
    example = re.search(r"^#SYMBOLIZERD_ARGS=(.*)$", text, re.M).group(1)
    for label, extra in (("env-unit", env.get("SYMBOLIZERD_ARGS", "")), ("env-example", example)):
        argv = exec_start.replace("${SYMBOLIZERD_LISTEN}", env.get("SYMBOLIZERD_LISTEN", listen))
        argv = argv.replace("%S", "/var/lib").replace("$SYMBOLIZERD_ARGS", extra)
        start_with(args, work, label, shlex.split(argv))
    print("  %d flags documented; the daemon starts with each value and with the unit's command line"
          % len(documented))


def containerfile(args):
    """(stages as [(FROM line, [(instruction, text)])])."""
    text = open(os.path.join(args.source, "deploy/container/Containerfile")).read()
    text = re.sub(r"\\\n", " ", text)
    stages = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        ins, _, rest = line.partition(" ")
        if ins.upper() == "FROM":
            stages.append((rest, []))
        else:
            check(stages, "Containerfile: %s before FROM" % ins)
            stages[-1][1].append((ins.upper(), rest.strip()))
    return stages


def needed_packages(binaries):
    """Debian packages of the libraries the binaries link directly."""
    pkgs = {}
    for b in binaries:
        _, dyn = run(["readelf", "-d", b])
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dyn)
        _, ldd = run(["ldd", b])
        paths = dict(re.findall(r"^\s*(\S+) => (\S+)", ldd, re.M))
        for lib in needed:
            check(lib in paths, "ldd %s does not resolve %s" % (b, lib))
            p = paths[lib]
            cands = [p, os.path.realpath(p)]
            cands += ["/usr" + c for c in cands if not c.startswith("/usr/")]
            owner = None
            for c in cands:
                r = subprocess.run(["dpkg", "-S", c], capture_output=True, text=True)
                if r.returncode == 0:
                    owner = r.stdout.split(":")[0].strip()
                    break
            check(owner, "dpkg -S: no package owns %s" % p)
            pkgs[owner] = lib
    return pkgs


def sanitized(binary):
    """Whether binary was built with ASan, TSan or UBSan (their runtime's symbols)."""
    out = subprocess.run(["readelf", "--wide", "-s", binary], capture_output=True,
                         text=True).stdout
    return re.search(r"\b__(asan|tsan)_init\b|\b__ubsan_handle_", out) is not None


def case_container(args, work):
    stages = containerfile(args)
    check(len(stages) == 2, "Containerfile: %d stages, want build + runtime" % len(stages))
    for frm, _ in stages:
        check(frm.split()[0] == "debian:bookworm-slim", "Containerfile: FROM %s" % frm)
    # The revision: the build context has no .git, so it comes from --build-arg
    # REVISION, through SYMBOLIZER_REVISION, which cmake/version.cmake prefers.
    build = stages[0][1]
    check(("ARG", "REVISION=unknown") in build and ("ENV", "SYMBOLIZER_REVISION=$REVISION") in build,
          "Containerfile: no REVISION build argument reaching SYMBOLIZER_REVISION")
    header = os.path.join(work, "base_version_gen.h")
    run(["cmake", "-DSRC=" + os.path.join(work, "no-git"), "-DOUT=" + header, "-DVERSION=9.9.9",
         "-DTEMPLATE=" + os.path.join(args.source, "cmake/base_version_gen.h.in"),
         "-P", os.path.join(args.source, "cmake/version.cmake")],
        env=dict(os.environ, SYMBOLIZER_REVISION="v1.2-3-gabc def"))
    check('"v1.2-3-gabc_def"' in open(header).read(), "SYMBOLIZER_REVISION not used by version.cmake")
    runtime = stages[1][1]
    ins = {}
    for i, rest in runtime:
        ins.setdefault(i, []).append(rest)
    user = ins.get("USER", ["root"])[-1].split(":")[0]
    check(user not in ("root", "0"), "Containerfile: runs as %r" % user)
    check(ins.get("VOLUME") and "/var/lib/symbolizer" in ins["VOLUME"][0], "no VOLUME for the store")
    check(ins.get("EXPOSE") == ["8080"], "EXPOSE %r" % ins.get("EXPOSE"))
    hc = " ".join(ins.get("HEALTHCHECK", []))
    check("curl" in hc and "/healthz" in hc, "HEALTHCHECK %r" % hc)
    cmd = json.loads(ins["CMD"][-1])
    check("--listen=0.0.0.0:8080" in cmd, "CMD %r does not listen on 0.0.0.0:8080" % cmd)
    check(json.loads(ins["ENTRYPOINT"][-1]) == ["/usr/bin/symbolizerd"], "ENTRYPOINT")
    # The front symbolctl execs symbolctl-full from bin/../libexec/symbolizer/.
    run_text = " ".join(rest.replace("\\", " ") for i, rest in build if i == "RUN")
    for path in ("/out/usr/bin/symbolizerd", "/out/usr/bin/symbolctl",
                 "/out/usr/libexec/symbolizer/symbolctl-full"):
        check(re.search(r"install -D -m 0755 \S+ %s(\s|$)" % re.escape(path), run_text),
              "Containerfile does not install %s" % path)
    arg = [a for a in ins.get("ARG", []) if a.startswith("RUNTIME_LIBS=")]
    check(arg, "no ARG RUNTIME_LIBS in the runtime stage")
    listed = set(arg[0].split("=", 1)[1].strip('"').split())
    if sanitized(args.symbolizerd):
        # The container ships an uninstrumented build; a sanitizer's runtime links
        # more (libgcc_s, its own libraries). The Release trees check the list.
        print("  skip RUNTIME_LIBS: a sanitizer build links its runtime's libraries too")
    else:
        linked = needed_packages([args.symbolizerd, args.symbolctl, args.symbolctl_full])
        want = {p for p in linked if p != "libc6"}  # libc6 is in the base image
        check(listed == want, "RUNTIME_LIBS %s; the binaries link %s (missing %s, extra %s)"
              % (sorted(listed), sorted(want), sorted(want - listed), sorted(listed - want)))
        print("  RUNTIME_LIBS = packages of the linked libraries: %s" % " ".join(sorted(want)))
    # Every package either stage installs exists in the apt lists, when there are any.
    pkgs = set(listed)
    for _, instrs in stages:
        for i, rest in instrs:
            m = re.search(r"apt-get install (?:-\S+ )*(.*?)(?:&&|$)", rest) if i == "RUN" else None
            if m:
                pkgs |= {p for p in m.group(1).split() if not p.startswith("$")}
    r = subprocess.run(["apt-cache", "policy", "libc6"], capture_output=True, text=True)
    if "Candidate: (none)" in r.stdout or r.returncode != 0:
        print("  skip: no apt lists here, package names not checked")
    else:
        out = subprocess.run(["apt-cache", "policy"] + sorted(pkgs), capture_output=True,
                             text=True).stdout
        known = {m.group(1) for m in re.finditer(r"^(\S+?)(?::\S+)?:\n\s+Installed: .*\n"
                                                 r"\s+Candidate: (?!\(none\))", out, re.M)}
        bad = sorted(pkgs - known)
        check(not bad, "packages apt does not know: %s" % bad)
        print("  %d packages of both stages known to apt" % len(pkgs))
    start_with(args, work, "container-cmd", cmd + ["--debuginfod-upstream-servers="])
    print("  not built: that needs a container engine and the network; the CMD's flags"
          " start the built daemon")


def k8s_objects(args):
    kdir = os.path.join(args.source, "deploy/kubernetes")
    _, out = run(["kubectl", "kustomize", kdir])
    docs = [d for d in yaml.safe_load_all(out) if d]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def case_yamllint(args, work):
    deploy = os.path.join(args.source, "deploy")
    run(["yamllint", "--strict", "-c", os.path.join(deploy, ".yamllint"), deploy])


def case_kubernetes(args, work):
    objs = k8s_objects(args)
    for (kind, name), o in objs.items():
        check(o.get("apiVersion") and o["metadata"].get("name"), "%s %s: apiVersion/name" % (kind, name))
        if kind != "Namespace":
            check(o["metadata"].get("namespace") == "symbolizer", "%s %s: namespace" % (kind, name))
    ss = objs.get(("StatefulSet", "symbolizer"))
    check(ss, "no StatefulSet symbolizer in %s" % sorted(objs))
    spec = ss["spec"]
    pod = spec["template"]
    labels = pod["metadata"]["labels"]
    check(all(labels.get(k) == v for k, v in spec["selector"]["matchLabels"].items()),
          "StatefulSet selector does not match its pod labels")
    headless = objs.get(("Service", spec["serviceName"]))
    check(headless and headless["spec"].get("clusterIP") == "None",
          "serviceName %s is not a headless Service" % spec["serviceName"])
    c = pod["spec"]["containers"][0]
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    for (kind, name), o in objs.items():
        if kind == "Service":
            sel = o["spec"]["selector"]
            check(all(labels.get(k) == v for k, v in sel.items()), "Service %s selects no pod" % name)
            for p in o["spec"]["ports"]:
                check(p["targetPort"] in ports or p["targetPort"] in ports.values(),
                      "Service %s: targetPort %r" % (name, p["targetPort"]))
    for probe in ("readinessProbe", "livenessProbe"):
        g = c.get(probe, {}).get("httpGet", {})
        grpc_probe = c.get(probe, {}).get("grpc", {})  # grpc.health.v1 (issue 26)
        check((g.get("path") == "/healthz" and g.get("port") in ports) or
              grpc_probe.get("port") in ports.values(), "%s: %r" % (probe, c.get(probe)))
    claims = {t["metadata"]["name"] for t in spec.get("volumeClaimTemplates", [])}
    vols = claims | {v["name"] for v in pod["spec"].get("volumes", [])}
    for m in c.get("volumeMounts", []):
        check(m["name"] in vols, "volumeMount %s has no volume" % m["name"])
    # The container's args: the store on the claim, and the flags start the daemon.
    env = {}
    for ef in c.get("envFrom", []):
        cm = objs.get(("ConfigMap", ef["configMapRef"]["name"]))
        check(cm, "envFrom: no ConfigMap %s" % ef["configMapRef"]["name"])
        env.update(cm["data"])
    argv = [re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], a) for a in c["args"]]
    flags = dict(a.split("=", 1) for a in argv)
    store = [m for m in c["volumeMounts"] if m["mountPath"] == flags.get("--data-dir")]
    check(store and store[0]["name"] in claims, "--data-dir is not on a volumeClaimTemplate")
    check(flags.get("--listen", "").endswith(":%d" % ports["http"]), "--listen vs containerPort")
    # Memory: the daemon's RSS under load plus the index cache fit the request,
    # under the limit; the store's bound fits its claim.
    res = c["resources"]
    req, lim = (size_bytes(res[k]["memory"]) for k in ("requests", "limits"))
    cache = size_bytes(flags.get("--index-cache-bytes", "1G"))
    check(BASE_RSS + cache <= req <= lim, "memory: %d MB RSS + %s cache vs request %s, limit %s"
          % (BASE_RSS >> 20, flags.get("--index-cache-bytes"), res["requests"]["memory"],
             res["limits"]["memory"]))
    claim = [t for t in spec["volumeClaimTemplates"] if t["metadata"]["name"] == store[0]["name"]][0]
    vol = size_bytes(claim["spec"]["resources"]["requests"]["storage"])
    check(size_bytes(flags.get("--max-store-bytes", "16G")) < vol, "--max-store-bytes over the volume")
    start_with(args, work, "kubernetes-args", argv + ["--debuginfod-upstream-servers="])
    print("  %d objects from kubectl kustomize; references, probes, memory and args checked;"
          " no schema validation offline (kubectl validates against a server)" % len(objs))


def case_kubernetes_s3(args, work):
    """deploy/kubernetes-s3 (issue 30): the base with its StatefulSet replaced
    by a Deployment of replaceable replicas on a shared bucket: the store on an
    emptyDir, the S3 settings from a ConfigMap, the credentials from a Secret
    (the AWS_* variables); its args start the daemon against a stand-in S3 on
    loopback that answers the bucket check."""
    import http.server
    import threading
    _, out = run(["kubectl", "kustomize", os.path.join(args.source, "deploy/kubernetes-s3")])
    objs = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(out) if d}
    check(("StatefulSet", "symbolizer") not in objs, "the StatefulSet is still there")
    dep = objs.get(("Deployment", "symbolizer"))
    check(dep and dep["spec"]["replicas"] >= 2, "no Deployment of replicas: %s" % sorted(objs))
    pod = dep["spec"]["template"]
    c = pod["spec"]["containers"][0]
    vols = {v["name"]: v for v in pod["spec"]["volumes"]}
    env = {}
    for ef in c["envFrom"]:
        cm = objs.get(("ConfigMap", ef["configMapRef"]["name"]))
        check(cm, "envFrom: no ConfigMap %s" % ef["configMapRef"]["name"])
        env.update(cm["data"])
    secret_env = {}
    for e in c["env"]:
        ref = e["valueFrom"]["secretKeyRef"]
        sec = objs.get(("Secret", ref["name"]))
        check(sec and ref["key"] in sec["stringData"], "env %s: no Secret key" % e["name"])
        secret_env[e["name"]] = sec["stringData"][ref["key"]]
    check(set(secret_env) == {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"},
          "credentials not from the Secret: %s" % sorted(secret_env))
    argv = [re.sub(r"\$\((\w+)\)", lambda m: env[m.group(1)], a) for a in c["args"]]
    flags = dict(a.split("=", 1) for a in argv)
    store = [m for m in c["volumeMounts"] if m["mountPath"] == flags.get("--data-dir")]
    check(store and "emptyDir" in vols[store[0]["name"]], "--data-dir is not on an emptyDir")
    for f in ("--s3-endpoint", "--s3-bucket", "--s3-region"):
        check(flags.get(f), "%s missing from the args" % f)
    for (kind, name), o in objs.items():
        if kind == "Service":
            sel = o["spec"]["selector"]
            check(all(pod["metadata"]["labels"].get(k) == v for k, v in sel.items()),
                  "Service %s selects no pod" % name)

    class S3(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            ok = self.path.split("?")[0].strip("/") == flags["--s3-bucket"]
            body = b"<ListBucketResult></ListBucketResult>" if ok else b""
            self.send_response(200 if ok else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), S3)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    saved = {k: os.environ.get(k) for k in secret_env}
    try:
        os.environ.update(secret_env)
        argv = [a for a in argv if not a.startswith("--s3-endpoint=")]
        argv.append("--s3-endpoint=http://127.0.0.1:%d" % srv.server_address[1])
        start_with(args, work, "kubernetes-s3-args", argv + ["--debuginfod-upstream-servers="])
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        srv.shutdown()
        srv.server_close()
    print("  Deployment x%d on an emptyDir; S3 settings from a ConfigMap, credentials from a"
          " Secret; the args start the daemon" % dep["spec"]["replicas"])


def case_prometheus(args, work):
    pdir = os.path.join(args.source, "deploy/prometheus")
    run(["promtool", "check", "config", "prometheus.yml"], cwd=pdir)
    run(["promtool", "check", "rules", "alerts.yml"], cwd=pdir)
    _, out = run(["promtool", "test", "rules", "alerts_test.yml"], cwd=pdir)
    rules = [r["alert"] for g in yaml.safe_load(open(os.path.join(pdir, "alerts.yml")))["groups"]
             for r in g["rules"] if "alert" in r]
    tests = yaml.safe_load(open(os.path.join(pdir, "alerts_test.yml")))["tests"]
    for a in rules:
        evals = [e for t in tests for e in t.get("alert_rule_test", []) if e["alertname"] == a]
        check(any(e.get("exp_alerts") for e in evals) and any(not e.get("exp_alerts") for e in evals),
              "alerts_test.yml: %s needs a firing and a quiet evaluation" % a)
    print("  %d alerts, each tested firing and quiet" % len(rules))


def dashboard_exprs(args):
    path = os.path.join(args.source, "deploy/grafana/symbolizer.json")
    run(["jq", "-e", ".panels | length > 0", path])
    dash = json.load(open(path))
    exprs = []
    for p in dash["panels"]:
        for t in p.get("targets", []):
            exprs.append(t["expr"])
    check(exprs, "no expressions in the dashboard")
    return exprs


def case_grafana(args, work):
    exprs = dashboard_exprs(args)
    subst = {"$__rate_interval": "1m", "$job": "symbolizer", "$instance": ".*"}
    rules = []
    for i, e in enumerate(exprs):
        for k, v in subst.items():
            e = e.replace(k, v)
        check("$" not in e, "unknown variable in %r" % e)
        rules.append({"record": "dashboard:expr_%d" % i, "expr": e})
    path = os.path.join(work, "dashboard_rules.yml")
    open(path, "w").write(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    run(["promtool", "check", "rules", path])
    print("  %d panel expressions parse (promtool)" % len(exprs))


def case_metric_names(args, work):
    exprs = dashboard_exprs(args)
    pdir = os.path.join(args.source, "deploy/prometheus")
    for g in yaml.safe_load(open(os.path.join(pdir, "alerts.yml")))["groups"]:
        exprs += [r["expr"] for r in g["rules"]]
    d = Daemon(args.symbolizerd, os.path.join(work, "metrics.data"), os.path.join(work, "metrics.log"),
               upstreams=["http://127.0.0.1:%d" % free_port()])
    try:
        text = d.metrics()
    finally:
        d.stop()
    known = set()
    for name, kind in re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M):
        known.add(name)
        if kind == "histogram":
            known |= {name + s for s in ("_bucket", "_sum", "_count")}
    used = set()
    for e in exprs:
        used |= set(re.findall(r"\b(symbolizer_[a-z0-9_]+)\b", e))
    unknown = sorted(used - known)
    check(not unknown, "metrics used but not exported: %s" % unknown)
    print("  %d metric names used, all in /metrics" % len(used))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--symbolizerd", required=True)
    ap.add_argument("--symbolctl", required=True)
    ap.add_argument("--symbolctl-full", required=True)
    ap.add_argument("--source", required=True, help="the repository's top directory")
    ap.add_argument("cases", nargs="*")
    args = ap.parse_args()
    work = tempdir("deploy-test-")
    cases = [("systemd_verify", case_systemd_verify), ("systemd_start", case_systemd_start),
             ("env_file", case_env_file), ("container", case_container),
             ("yamllint", case_yamllint), ("kubernetes", case_kubernetes),
             ("kubernetes_s3", case_kubernetes_s3),
             ("prometheus", case_prometheus), ("grafana", case_grafana),
             ("metric_names", case_metric_names)]
    try:
        rc = run_cases([(n, (lambda f: lambda: f(args, work))(f)) for n, f in cases], args.cases)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
