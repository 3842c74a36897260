#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# s3_server_start.sh - start a real, throw-away S3 endpoint for the tests (issue 30),
# from the worked recipe: Ceph RADOS Gateway on a single-node Ceph cluster: 1 mon + 1 memstore OSD + radosgw, no mgr) bound to
# 127.0.0.1 only, with all state under one directory.
#
# Needs (Debian 12): apt-get install -y --no-install-recommends ceph-mon ceph-osd radosgw
#
# Environment (all optional):
#   S3_STATE_DIR      state directory        (default: ${TMPDIR:-/tmp}/ceph-s3)
#   S3_PORT           radosgw HTTP port      (default: first free port from 7480)
#   S3_ACCESS_KEY     S3 access key          (default: random)
#   S3_SECRET_KEY     S3 secret key          (default: random)
#   S3_BUCKET         bucket to pre-create   (default: none)
#   S3_OBJECTSTORE    memstore | bluestore   (default: memstore = RAM only;
#                     bluestore = sparse file $S3_STATE_DIR/osd/block)
#   S3_STORE_BYTES    memstore capacity / bluestore file size (default: 4 GiB)
#   S3_START_TIMEOUT  overall timeout, seconds (default: 120; one in-flight
#                     ceph command may overrun it by <= 20 s, cleanup by <= 3 s)
#   S3_VERBOSE=1      print per-phase timings to stderr
#
# On success prints one line to stdout and exits 0:
#   S3_ENDPOINT=http://127.0.0.1:PORT S3_ACCESS_KEY=... S3_SECRET_KEY=... S3_PIDS="mon osd rgw"
# (the same line is in $S3_STATE_DIR/s3.env).  On failure prints the reason
# (and the tail of the relevant log) to stderr and exits non-zero.
#
# Idempotent: if the endpoint described by $S3_STATE_DIR/s3.env is up, it just
# prints it again.  If mon+osd are alive but radosgw is not, only radosgw is
# (re)started and the data is kept.  Anything else: wipe the dir, start fresh.
set -euo pipefail
set +m   # no job control: a background child must not be a process-group
         # leader, else setsid(1) forks and $! is not the daemon's pid

D=$(realpath -m -- "${S3_STATE_DIR:-${TMPDIR:-/tmp}/ceph-s3}")
TIMEOUT=${S3_START_TIMEOUT:-120}
OBJSTORE=${S3_OBJECTSTORE:-memstore}
STORE_BYTES=${S3_STORE_BYTES:-4294967296}
CONF=$D/ceph.conf
START=$SECONDS
T0=$(date +%s.%N)
note() { [ "${S3_VERBOSE:-0}" = 1 ] && awk -v a="$T0" -v b="$(date +%s.%N)" -v m="$*" 'BEGIN{printf "start-s3: [%5.2fs] %s\n", b-a, m}' >&2 || true; }

die() {
  echo "start-s3: ERROR: $*" >&2
  local f
  for f in "${SHOW_LOGS[@]:-}"; do
    [ -n "$f" ] && [ -s "$f" ] && { echo "---- tail $f" >&2; tail -n 25 "$f" >&2; }
  done
  exit 1
}
SHOW_LOGS=()
STARTED=()   # pids started by this run; killed again if this run fails
on_exit() {
  local rc=$? p
  [ $rc -eq 0 ] && return
  for p in "${STARTED[@]:-}"; do [ -n "$p" ] && kill -TERM "$p" 2>/dev/null || true; done
  for p in "${STARTED[@]:-}"; do
    [ -n "$p" ] || continue
    for _ in $(seq 15); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$p" 2>/dev/null || true
  done
  exit $rc
}
trap on_exit EXIT

for b in ceph ceph-mon ceph-osd monmaptool radosgw radosgw-admin curl setsid timeout realpath; do
  command -v $b >/dev/null || die "missing '$b' - apt-get install -y --no-install-recommends ceph-mon ceph-osd radosgw curl"
done
case $OBJSTORE in memstore|bluestore) ;; *) die "S3_OBJECTSTORE must be memstore or bluestore";; esac

# ---- helpers ----------------------------------------------------------------
alive() { # alive PID NAME -> the pid is running and is NAME
  [ -n "${1:-}" ] && [ -r /proc/$1/comm ] && [ "$(cat /proc/$1/comm 2>/dev/null)" = "$2" ]
}
port_free() { # no listener on TCP port $1 (ss from iproute2, else a connect probe to 127.0.0.1)
  if command -v ss >/dev/null; then ! ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
  else ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; fi
}
pick_port() { # pick_port START
  local p=$1
  while [ $p -lt $(($1 + 2000)) ]; do port_free $p && { echo $p; return; }; p=$((p + 1)); done
  die "no free port near $1"
}
rand() { tr -dc "$1" </dev/urandom | head -c "$2" || true; }
cephc() { timeout 20 ceph -c "$CONF" --connect-timeout 15 "$@"; }
rgwadm() { timeout 60 radosgw-admin -c "$CONF" -n client.admin "$@"; }
s3_up() { # any HTTP answer from radosgw (anonymous ListBuckets -> 200)
  curl -s -o /dev/null -m 3 -w '%{http_code}' "http://127.0.0.1:$1/" 2>/dev/null | grep -q '^[2-4]'
}
spawn() { # spawn NAME LOGFILE CMD... ; detached, own session, no inherited fds
  local name=$1 log=$2; shift 2
  setsid "$@" </dev/null >>"$log" 2>&1 &
  local pid=$!
  echo $pid >"$D/run/$name.pid"
  sleep 0.3
  alive $pid "$(basename "$1" | cut -c1-15)" || { SHOW_LOGS=("$log" "$D/log/$name.log"); die "$name exited at once"; }
  echo $pid
}
wait_for() { # wait_for WHAT LOG CMD...
  local what=$1 log=$2; shift 2
  while ! "$@" >/dev/null 2>&1; do
    [ $((SECONDS - START)) -lt "$TIMEOUT" ] || { SHOW_LOGS=("$log"); die "timeout (${TIMEOUT}s) waiting for $what"; }
    sleep 0.5
  done
}
by_conf() { # pid of the $1 daemon started with "-c $CONF" (if a pid file is stale)
  local c
  for c in /proc/[0-9]*/cmdline; do
    [ "$(cat "${c%/cmdline}/comm" 2>/dev/null)" = "$1" ] || continue
    if tr '\0' ' ' <"$c" 2>/dev/null | grep -qF -- "-c $CONF "; then c=${c#/proc/}; echo "${c%/cmdline}"; return 0; fi
  done
  return 0
}
print_env() {
  . "$D/s3.env"
  echo "S3_ENDPOINT=$S3_ENDPOINT S3_ACCESS_KEY=$S3_ACCESS_KEY S3_SECRET_KEY=$S3_SECRET_KEY S3_PIDS=\"$S3_PIDS\""
}
make_bucket() { # create $S3_BUCKET if asked (200 = created, 409 = exists and is ours)
  [ -n "${S3_BUCKET:-}" ] || return 0
  local code e
  e=$(. "$D/s3.env"; echo "$S3_ENDPOINT $S3_ACCESS_KEY:$S3_SECRET_KEY")
  code=$(curl -s -o "$D/log/bucket.out" -w '%{http_code}' -m 30 -X PUT \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" --aws-sigv4 "aws:amz:us-east-1:s3" \
    --user "${e#* }" "${e%% *}/$S3_BUCKET") || true
  case $code in 200|409) ;; *) SHOW_LOGS=("$D/log/bucket.out"); die "create bucket $S3_BUCKET: HTTP $code";; esac
}
start_rgw() {
  local pid
  pid=$(spawn rgw "$D/log/rgw.stderr" radosgw -f -c "$CONF" -n client.rgw.s3)
  SHOW_LOGS=("$D/log/ceph-client.rgw.s3.log" "$D/log/rgw.stderr")
  while ! s3_up "$PORT"; do
    alive "$pid" radosgw || die "radosgw died"
    [ $((SECONDS - START)) -lt "$TIMEOUT" ] || die "timeout (${TIMEOUT}s) waiting for radosgw on 127.0.0.1:$PORT"
    sleep 0.5
  done
  echo "$pid"
}

# ---- 1. idempotency / partial restart ---------------------------------------
if [ -f "$D/s3.env" ]; then
  ( . "$D/s3.env"; set -- $S3_PIDS
    alive "$1" ceph-mon && alive "$2" ceph-osd && alive "$3" radosgw && s3_up "${S3_ENDPOINT##*:}" ) \
    && { make_bucket; print_env; exit 0; }
  . "$D/s3.env"
  set -- $S3_PIDS
  if alive "$1" ceph-mon && alive "$2" ceph-osd; then
    # mon + osd still hold the data: restart radosgw only, keep everything.
    PORT=${S3_ENDPOINT##*:}
    port_free "$PORT" || die "radosgw is down but port $PORT is taken by something else"
    echo "start-s3: radosgw not running, restarting it (data kept)" >&2
    RGW_PID=$(start_rgw) || { p=$(cat "$D/run/rgw.pid" 2>/dev/null) && STARTED+=("$p"); exit 1; }
    sed -i "s/^S3_PIDS=.*/S3_PIDS=\"$1 $2 $RGW_PID\"/" "$D/s3.env"
    make_bucket; print_env; exit 0
  fi
fi
# stale or partial state: stop whatever is left (by pid) and wipe
if [ -d "$D" ]; then
  [ -f "$D/ceph.conf" ] || [ -d "$D/run" ] || [ -z "$(ls -A "$D")" ] || die "$D exists and is not a start-s3 state dir"
  for n in radosgw ceph-osd ceph-mon; do
    case $n in radosgw) f=rgw;; ceph-osd) f=osd;; *) f=mon;; esac
    p=$(cat "$D/run/$f.pid" 2>/dev/null || true)
    # fall back to "the $n started with -c $D/ceph.conf" if the pid file is stale
    alive "${p:-0}" $n || p=$(by_conf $n)
    [ -n "$p" ] || continue
    kill -TERM "$p"; for _ in $(seq 100); do alive "$p" $n || break; sleep 0.2; done; alive "$p" $n && kill -KILL "$p"
  done
  rm -rf "$D"
fi

# ---- 2. fresh cluster -------------------------------------------------------
MON_PORT=$(pick_port 13300)
PORT=${S3_PORT:-$(pick_port 7480)}
port_free "$PORT" || die "S3_PORT $PORT is already in use"
[ "$PORT" != "$MON_PORT" ] || MON_PORT=$(pick_port $((MON_PORT + 1)))
mkdir -p "$D"/{mon,osd,rgw,run,log,crash}
FSID=$(cat /proc/sys/kernel/random/uuid)
OSD_UUID=$(cat /proc/sys/kernel/random/uuid)
ACCESS=${S3_ACCESS_KEY:-$(rand 'A-Z0-9' 20)}
SECRET=${S3_SECRET_KEY:-$(rand 'A-Za-z0-9' 40)}

if [ "$OBJSTORE" = memstore ]; then
  STORE_CONF="osd_objectstore = memstore
memstore_device_bytes = $STORE_BYTES
# write the in-memory store to osd_data on clean stop (default true = _exit)
osd_fast_shutdown = false"
else
  STORE_CONF="osd_objectstore = bluestore
bluestore_block_path = $D/osd/block
bluestore_block_create = true
bluestore_block_size = $STORE_BYTES
bluestore_block_db_create = false
bluestore_block_wal_create = false
bluestore_fsck_on_mount = false
osd_memory_target = 939524096
bluestore_cache_autotune = true"
fi

cat >"$CONF" <<EOF
[global]
fsid = $FSID
mon_host = v2:127.0.0.1:$MON_PORT
public_addr = 127.0.0.1
cluster_addr = 127.0.0.1
ms_bind_msgr1 = false
ms_bind_msgr2 = true
ms_bind_ipv6 = false
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
# radosgw defaults to ms_mon_client_mode=secure, impossible without cephx (-> EACCES, "failed to fetch mon config")
ms_mon_client_mode = crc
keyring = $D/keyring
run_dir = $D/run
admin_socket = $D/run/\$name.asok
crash_dir = $D/crash
exporter_sock_dir = $D/run
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 0
mon_allow_pool_size_one = true
mon_allow_pool_delete = true
mon_warn_on_pool_no_redundancy = false
mon_warn_on_insecure_global_id_reclaim_allowed = false
mon_max_pg_per_osd = 1000
client_mount_timeout = 30
rados_mon_op_timeout = 30

[mon]
mon_data = $D/mon/\$name
log_file = $D/log/ceph-\$name.log
mon_cluster_log_file = $D/log/ceph.log
mon_data_avail_warn = 2
mon_data_avail_crit = 1
# mon batches map updates for paxos_propose_interval (default 1s); every pool
# rgw creates costs ~1 round -> cold start 16s; at 0.05s it is ~3s
paxos_propose_interval = 0.05

[osd]
osd_data = $D/osd/\$name
log_file = $D/log/ceph-\$name.log
osd_crush_initial_weight = 1
$STORE_CONF

[client.rgw.s3]
log_file = $D/log/ceph-\$name.log
rgw_data = $D/rgw
rgw_frontends = beast endpoint=127.0.0.1:$PORT
rgw_thread_pool_size = 64
# deleted objects' data is reclaimed by RGW GC only after rgw_gc_obj_min_wait
# (default 2h); with memstore that data sits in RAM, so reclaim quickly
rgw_gc_obj_min_wait = 60
rgw_gc_processor_period = 60
EOF

# -- mon
SHOW_LOGS=("$D/log/mkfs.log")
monmaptool --create --fsid "$FSID" --addv a "[v2:127.0.0.1:$MON_PORT]" "$D/monmap" >"$D/log/mkfs.log" 2>&1 || die "monmaptool failed"
timeout 60 ceph-mon -c "$CONF" --mkfs -i a --monmap "$D/monmap" >>"$D/log/mkfs.log" 2>&1 || die "ceph-mon --mkfs failed"
note "mkfs done, starting ceph-mon"
MON_PID=$(spawn mon "$D/log/mon.stderr" ceph-mon -f -c "$CONF" -i a); STARTED+=("$MON_PID")
wait_for "ceph-mon quorum on 127.0.0.1:$MON_PORT" "$D/log/ceph-mon.a.log" cephc mon stat

note "ceph-mon answers"
# -- osd
SHOW_LOGS=("$D/log/mkfs.log")
OSD_ID=$(cephc osd new "$OSD_UUID" 2>>"$D/log/mkfs.log") || die "ceph osd new failed"
[ "$OSD_ID" = 0 ] || die "unexpected osd id '$OSD_ID'"
mkdir -p "$D/osd/osd.0"   # ceph-osd --mkfs does not create osd_data (MemStore asserts)
timeout 120 ceph-osd -c "$CONF" -i 0 --mkfs --osd-uuid "$OSD_UUID" >>"$D/log/mkfs.log" 2>&1 || die "ceph-osd --mkfs failed"
note "osd mkfs done, starting ceph-osd"
OSD_PID=$(spawn osd "$D/log/osd.stderr" ceph-osd -f -c "$CONF" -i 0); STARTED+=("$OSD_PID")
osd_up() { cephc osd dump -f json 2>/dev/null | grep -q '"osd":0,"uuid":"[^"]*","up":1'; }
wait_for "osd.0 up" "$D/log/ceph-osd.0.log" osd_up

note "osd.0 up, starting radosgw"
# -- rgw (creates its pools and the default zone on first start)
RGW_PID=$(start_rgw) || { p=$(cat "$D/run/rgw.pid" 2>/dev/null) && STARTED+=("$p"); exit 1; }
STARTED+=("$RGW_PID")

note "radosgw answers HTTP"
# -- S3 user
SHOW_LOGS=("$D/log/rgwadmin.log")
rgwadm user create --uid=s3test --display-name="S3 test user" \
  --access-key="$ACCESS" --secret-key="$SECRET" >"$D/log/rgwadmin.log" 2>&1 || die "radosgw-admin user create failed"

note "user created"
cat >"$D/s3.env" <<EOF
S3_ENDPOINT=http://127.0.0.1:$PORT
S3_ACCESS_KEY=$ACCESS
S3_SECRET_KEY=$SECRET
S3_PIDS="$MON_PID $OSD_PID $RGW_PID"
S3_STATE_DIR=$D
EOF

make_bucket
note "bucket done"
echo "start-s3: ready in $((SECONDS - START))s (state: $D)" >&2
print_env
