#!/usr/bin/env bash
# tools/lib/etcd.sh — the etcd servers the cluster-mode tests use (the role of Kubernetes'
# hack/lib/etcd.sh: install, start and stop a local etcd): a single member and a three-member
# cluster, both on 127.0.0.1, data under a temporary directory in .run/etcd/.
#
# Sourced by tools/test (then call `etcd_up`), or run directly:
#   tools/lib/etcd.sh up                  install etcd-server/etcd-client if missing, start both (idempotent)
#   tools/lib/etcd.sh down                stop every member started here and remove the data
#   tools/lib/etcd.sh stop-member NAME    stop one member (s1, c1, c2, c3) by its PID file (SIGTERM; --kill: SIGKILL)
#   tools/lib/etcd.sh start-member NAME   start one member again on its data directory
#
# Endpoints are written to .run/etcd.env (sourceable, also read by the vitest suites):
#   KUBELET_TS_ETCD_SINGLE=http://127.0.0.1:23790
#   KUBELET_TS_ETCD_CLUSTER=http://127.0.0.1:23791,http://127.0.0.1:23792,http://127.0.0.1:23793
# PIDs are in .run/etcd/NAME.pid; only those PIDs are ever signalled, and only while their command
# line is still etcd's with our --name. ETCD_PORT_BASE (default 23790) moves every port.

ETCD_PACKAGES=(etcd-server etcd-client)
# Client ports ETCD_PORT_BASE (s1) and +1..+3 (c1-c3), peer ports +10..+13. Default 23790; another
# checkout on the same machine (or a check of these scripts) sets another base.
ETCD_PORT_BASE=${ETCD_PORT_BASE:-23790}
# name:client-port:peer-port:cluster
ETCD_MEMBERS=(
  "s1:$ETCD_PORT_BASE:$((ETCD_PORT_BASE + 10)):single"
  "c1:$((ETCD_PORT_BASE + 1)):$((ETCD_PORT_BASE + 11)):cluster"
  "c2:$((ETCD_PORT_BASE + 2)):$((ETCD_PORT_BASE + 12)):cluster"
  "c3:$((ETCD_PORT_BASE + 3)):$((ETCD_PORT_BASE + 13)):cluster"
)

_etcd_lib_init() {
  if [ -z "${KTS_ROOT:-}" ]; then
    # shellcheck source=tools/lib/common.sh
    . "$(dirname "${BASH_SOURCE[0]}")/common.sh"
  fi
  ETCD_DIR="$RUN_DIR/etcd"
  ETCD_ENV="$RUN_DIR/etcd.env"
}

# _etcd_member NAME — sets m_name m_client m_peer m_group for NAME; fails for an unknown name.
_etcd_member() {
  local m
  for m in "${ETCD_MEMBERS[@]}"; do
    IFS=: read -r m_name m_client m_peer m_group <<<"$m"
    [ "$m_name" = "$1" ] && return 0
  done
  die "unknown etcd member: $1 (one of s1 c1 c2 c3)"
}

# _etcd_initial_cluster GROUP — the --initial-cluster value of GROUP.
_etcd_initial_cluster() {
  local m out="" n c p g
  for m in "${ETCD_MEMBERS[@]}"; do
    IFS=: read -r n c p g <<<"$m"
    [ "$g" = "$1" ] && out+="${out:+,}$n=http://127.0.0.1:$p"
  done
  printf '%s\n' "$out"
}

# _etcd_alive NAME — true while the member's recorded PID runs etcd --name NAME.
_etcd_alive() {
  local pid
  pid="$(read_pid "$ETCD_DIR/$1.pid")" && pid_matches "$pid" "--name $1 "
}

# etcd_start_member NAME — start NAME on its data dir (new cluster state if the dir is new).
etcd_start_member() {
  _etcd_lib_init
  _etcd_member "$1"
  _etcd_alive "$m_name" && return 0
  local root data state=new
  root="$(cat "$ETCD_DIR/dataroot" 2>/dev/null)" || die "no etcd data root (run: tools/lib/etcd.sh up)"
  data="$root/$m_name"
  [ -d "$data/member" ] && state=existing
  mkdir -p "$data"
  setsid sh -c 'echo $$ > "$1"; shift; exec "$@"' sh "$ETCD_DIR/$m_name.pid" \
    etcd --name "$m_name" --data-dir "$data" \
    --listen-client-urls "http://127.0.0.1:$m_client" --advertise-client-urls "http://127.0.0.1:$m_client" \
    --listen-peer-urls "http://127.0.0.1:$m_peer" --initial-advertise-peer-urls "http://127.0.0.1:$m_peer" \
    --initial-cluster "$(_etcd_initial_cluster "$m_group")" --initial-cluster-state "$state" \
    --initial-cluster-token "kubelet-ts-$m_group" --heartbeat-interval 100 --election-timeout 1000 \
    --logger zap --log-level warn \
    </dev/null >>"$ETCD_DIR/$m_name.log" 2>&1 &
  # Not a job of the calling shell: its end is never reported ("Killed …") after tools/test's last line.
  disown
  local i
  for ((i = 0; i < 50; i++)); do
    [ -s "$ETCD_DIR/$m_name.pid" ] && return 0
    sleep 0.1
  done
  die "etcd member $m_name did not start (log: .run/etcd/$m_name.log)"
}

# etcd_stop_member NAME [--kill] — stop NAME by its PID file (SIGTERM, or SIGKILL with --kill).
etcd_stop_member() {
  _etcd_lib_init
  _etcd_member "$1"
  local pid i
  pid="$(read_pid "$ETCD_DIR/$m_name.pid")" || return 0
  pid_matches "$pid" "--name $m_name " || { rm -f "$ETCD_DIR/$m_name.pid"; return 0; }
  kill "$([ "${2:-}" = --kill ] && echo -KILL || echo -TERM)" "$pid" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do
    pid_matches "$pid" "--name $m_name " || { rm -f "$ETCD_DIR/$m_name.pid"; return 0; }
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$ETCD_DIR/$m_name.pid"
}

# _etcd_healthy ENDPOINTS — true when every endpoint answers healthy.
_etcd_healthy() {
  ETCDCTL_API=3 timeout 10 etcdctl --endpoints="$1" --command-timeout=2s endpoint health >/dev/null 2>&1
}

# etcd_down — stop every member started here and remove the data directory.
etcd_down() {
  _etcd_lib_init
  local m n
  for m in "${ETCD_MEMBERS[@]}"; do
    n="${m%%:*}"
    etcd_stop_member "$n"
  done
  local root
  root="$(cat "$ETCD_DIR/dataroot" 2>/dev/null)" || root=""
  [ -n "$root" ] && [[ "$root" == "$ETCD_DIR/"* ]] && rm -rf "$root"
  rm -f "$ETCD_DIR/dataroot" "$ETCD_ENV"
}

# etcd_running — true when every member started here (by its PID file) is running.
etcd_running() {
  _etcd_lib_init
  local m
  for m in "${ETCD_MEMBERS[@]}"; do
    _etcd_alive "${m%%:*}" || return 1
  done
}

# etcd_up — install etcd if missing; (re)start the single member and the three-member cluster unless
# they already answer; write .run/etcd.env. Idempotent.
etcd_up() {
  _etcd_lib_init
  local p missing=()
  for p in "${ETCD_PACKAGES[@]}"; do pkg_installed "$p" || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ] || ! command -v etcd >/dev/null 2>&1; then
    (SYSTEM_PACKAGES=("${ETCD_PACKAGES[@]}") && ensure_system_packages) || die "could not install ${ETCD_PACKAGES[*]}"
  fi
  mkdir -p "$ETCD_DIR"
  local b=$ETCD_PORT_BASE
  local single="http://127.0.0.1:$b"
  local cluster="http://127.0.0.1:$((b + 1)),http://127.0.0.1:$((b + 2)),http://127.0.0.1:$((b + 3))"
  local all_alive=1 m n
  for m in "${ETCD_MEMBERS[@]}"; do
    n="${m%%:*}"
    _etcd_alive "$n" || all_alive=""
  done
  if [ -z "$all_alive" ] || ! _etcd_healthy "$single,$cluster"; then
    etcd_down
    mkdir -p "$ETCD_DIR"
    mktemp -d "$ETCD_DIR/data.XXXXXX" >"$ETCD_DIR/dataroot"
    say "starting etcd: one member on $b, a three-member cluster on $((b + 1))-$((b + 3)) (logs: .run/etcd/)"
    for m in "${ETCD_MEMBERS[@]}"; do etcd_start_member "${m%%:*}"; done
    local deadline=$((SECONDS + 30))
    until _etcd_healthy "$single,$cluster"; do
      if ((SECONDS >= deadline)); then
        show_log_tail "$ETCD_DIR/c1.log"
        die "etcd did not become healthy within 30 s (logs: .run/etcd/)"
      fi
      sleep 0.2
    done
    # Healthy endpoints are not enough: another etcd (another checkout's) may hold the ports while
    # ours exited. The tests stop and start members by our PID files, so ours must be the ones up.
    for m in "${ETCD_MEMBERS[@]}"; do
      n="${m%%:*}"
      if ! _etcd_alive "$n"; then
        show_log_tail "$ETCD_DIR/$n.log"
        die "etcd member $n exited (log: .run/etcd/$n.log); if its port is held by another etcd (another checkout's tools/lib/etcd.sh up), stop that one first"
      fi
    done
    say "etcd is up"
  fi
  printf 'KUBELET_TS_ETCD_SINGLE=%s\nKUBELET_TS_ETCD_CLUSTER=%s\n' "$single" "$cluster" >"$ETCD_ENV"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  _etcd_lib_init
  case "${1:-}" in
    up) etcd_up ;;
    down) etcd_down ;;
    start-member) etcd_start_member "${2:?member name}" ;;
    stop-member) etcd_stop_member "${2:?member name}" "${3:-}" ;;
    *) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
  esac
fi
