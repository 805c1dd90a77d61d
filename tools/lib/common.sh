# tools/lib/common.sh — shared shell functions for tools/up, tools/test and tools/down
# (the role of Kubernetes' hack/lib/*.sh: install, start the runtime, build images, build the binary).
#
# Sourced, never executed. Callers run with `set -euo pipefail` and get:
#   KTS_ROOT, RUN_DIR, DOCKER_SOCK, PAUSE_IMAGE, BUSYBOX_IMAGE  (read-only settings)
#   say / warn / die                 progress and error output
#   prepare                          everything tools/test needs: packages, npm, dockerd, images, build
#   ensure_* / build_project         the single steps of prepare
#   stop_pid_file FILE MATCH WHAT    stop a process we started, identified by its PID file
#
# Rules kept here: only processes whose PID we wrote into .run/*.pid are ever signalled, and only
# while their command line still matches what we started (a reused PID is left alone). A dockerd
# that already answers is used as it is, whoever started it.

KTS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
RUN_DIR="$KTS_ROOT/.run"
DOCKER_SOCK=/var/run/docker.sock
PAUSE_IMAGE=kubelet-ts/pause:1.0
BUSYBOX_IMAGE=kubelet-ts/busybox:1.35
# Label on our local images: a hash of everything they are built from (see tools/lib/images.sh).
SOURCE_HASH_LABEL=kubelet-ts.source-hash
# Debian packages the environment needs (docker.io brings containerd, runc and tini;
# containernetworking-plugins the CNI plugins of the pod network, iptables its portmap;
# python3-kubernetes the official Python client the API-machinery tests drive, issue #39).
SYSTEM_PACKAGES=(docker.io busybox-static gcc libc6-dev containernetworking-plugins iptables iproute2 python3-kubernetes)
# dockerd flags: no bridge, no iptables/NAT rules (containers use network none, host or container:<sandbox>).
DOCKERD_ARGS=(--bridge=none --iptables=false --ip-masq=false)

say() { printf '==> %s\n' "$*"; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# as_root CMD... — run CMD as root (directly when we are root, else through passwordless sudo).
as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo -n "$@"
  else
    die "need root for: $* (run as root, or set up passwordless sudo)"
  fi
}

# dk ARGS... — the docker CLI pointed at the socket the agent and the tests use.
dk() { docker -H "unix://$DOCKER_SOCK" "$@"; }

# show_log_tail FILE [LINES] — print the end of a log to stderr (used before dying).
show_log_tail() {
  [ -f "$1" ] || return 0
  printf -- '--- last lines of %s ---\n' "${1#"$KTS_ROOT"/}" >&2
  tail -n "${2:-30}" "$1" >&2 || true
  printf -- '---\n' >&2
}

# read_pid FILE — print the PID stored in FILE; fails if there is none.
read_pid() {
  [ -f "$1" ] || return 1
  local pid
  pid="$(tr -dc '0-9' <"$1")"
  [ -n "$pid" ] || return 1
  printf '%s\n' "$pid"
}

# pid_matches PID TEXT — true while PID is alive (not a zombie) and its command line contains TEXT.
pid_matches() {
  local cmdline
  cmdline="$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline")" || return 1
  [ -n "$cmdline" ] && [[ "$cmdline" == *"$2"* ]]
}

# stop_pid_file FILE MATCH WHAT [TIMEOUT_S] [KILL_AFTER] — SIGTERM the process recorded in FILE if it
# is alive and its command line contains MATCH, wait up to TIMEOUT_S seconds (default 30) for it to
# go; then SIGKILL it when KILL_AFTER is "kill", else fail. A stale or foreign PID is never signalled.
stop_pid_file() {
  local file=$1 match=$2 what=$3 timeout=${4:-30} kill_after=${5:-} pid i
  if ! pid="$(read_pid "$file")"; then
    rm -f "$file"
    return 0
  fi
  if ! pid_matches "$pid" "$match"; then
    rm -f "$file"
    return 0
  fi
  say "stopping $what (pid $pid)"
  as_root kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < timeout * 10; i++)); do
    pid_matches "$pid" "$match" || { rm -f "$file"; return 0; }
    sleep 0.1
  done
  if [ "$kill_after" = kill ]; then
    warn "$what (pid $pid) did not stop within ${timeout} s after SIGTERM; sending SIGKILL"
    as_root kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      pid_matches "$pid" "$match" || { rm -f "$file"; return 0; }
      sleep 0.1
    done
  fi
  die "$what (pid $pid) is still running"
}

# pkg_installed NAME — true if the Debian package NAME is installed.
pkg_installed() {
  [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" = "install ok installed" ]
}

# ensure_system_packages — apt-get install whichever of SYSTEM_PACKAGES is missing (apt-get update
# once first). The packaged docker service is kept from starting during the install (policy-rc.d,
# exit 101): it would run with a default bridge and iptables rules; ensure_dockerd starts our own.
ensure_system_packages() {
  local missing=() p
  for p in "${SYSTEM_PACKAGES[@]}"; do
    if [ "$p" = docker.io ] && command -v dockerd >/dev/null 2>&1 && command -v docker >/dev/null 2>&1; then
      continue # another Docker engine package (e.g. docker-ce) serves as well
    fi
    pkg_installed "$p" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    return 0
  fi
  command -v apt-get >/dev/null 2>&1 || die "missing packages: ${missing[*]}; no apt-get to install them (Debian 12 expected)"
  mkdir -p "$RUN_DIR"
  local log="$RUN_DIR/apt.log" policy=/usr/sbin/policy-rc.d made_policy=
  export DEBIAN_FRONTEND=noninteractive
  say "apt-get update"
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get update >"$log" 2>&1; then
    show_log_tail "$log"
    die "apt-get update failed (log: .run/apt.log)"
  fi
  if [ ! -e "$policy" ]; then
    as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod 755 $policy"
    made_policy=1
    trap 'as_root rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  say "installing ${missing[*]}"
  local rc=0
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
    "${missing[@]}" >>"$log" 2>&1 || rc=$?
  if [ -n "$made_policy" ]; then
    as_root rm -f "$policy"
    trap - EXIT
  fi
  if [ "$rc" -ne 0 ]; then
    show_log_tail "$log"
    die "apt-get install ${missing[*]} failed (log: .run/apt.log)"
  fi
}

# ensure_node_modules — `npm ci` when node_modules is absent or older than package-lock.json. npm
# writes node_modules/.package-lock.json last, so that file is the install's time stamp (the
# directory itself can be a little older than the lockfile that produced it).
ensure_node_modules() {
  command -v node >/dev/null 2>&1 || die "node is not installed (Node 20 is needed)"
  command -v npm >/dev/null 2>&1 || die "npm is not installed"
  # A worktree that links another checkout's node_modules shares it: npm ci would empty the other
  # checkout's packages through the link (and install a copy here). Never install through a link.
  if [ -L "$KTS_ROOT/node_modules" ]; then
    [ -d "$KTS_ROOT/node_modules/" ] || die "node_modules is a link to nothing ($(readlink "$KTS_ROOT/node_modules"))"
    return 0
  fi
  local stamp="$KTS_ROOT/node_modules/.package-lock.json"
  [ -e "$stamp" ] || stamp="$KTS_ROOT/node_modules"
  if [ -d "$KTS_ROOT/node_modules" ] && ! [ "$KTS_ROOT/package-lock.json" -nt "$stamp" ]; then
    return 0
  fi
  mkdir -p "$RUN_DIR"
  say "installing npm packages (npm ci)"
  if ! (cd "$KTS_ROOT" && npm ci --no-audit --no-fund) >"$RUN_DIR/npm.log" 2>&1; then
    show_log_tail "$RUN_DIR/npm.log"
    die "npm ci failed (log: .run/npm.log)"
  fi
}

# docker_answers — true if a Docker engine answers on DOCKER_SOCK (within 10 s).
docker_answers() {
  timeout 10 docker -H "unix://$DOCKER_SOCK" version --format '{{.Server.Version}}' >/dev/null 2>&1
}

# ensure_dockerd — use the dockerd that answers on DOCKER_SOCK, whoever started it; otherwise start
# one (setsid, log .run/dockerd.log, PID in .run/dockerd.pid) and wait up to 90 s for it to answer
# (after an unclean stop it first cleans up the earlier run's containers, which takes a while).
#
# A dockerd that exits before answering is started again, up to DOCKERD_START_ATTEMPTS times in all.
# The case this is for: dockerd gives the containerd it supervises a fixed 15 s to come up
# (libcontainerd/supervisor startupTimeout) and exits with "timeout waiting for containerd to start"
# when containerd is slower. containerd is slow after an unclean stop of an earlier dockerd: at boot
# it deletes every task that earlier run left in /var/run/docker/containerd (~50 ms each; a few
# hundred took 14 s on the first CI machine). That cleanup is kept across attempts, so the next
# start is quick. Each attempt's log is kept as .run/dockerd.log.N.
DOCKERD_START_ATTEMPTS=3
ensure_dockerd() {
  if docker_answers; then
    return 0
  fi
  command -v dockerd >/dev/null 2>&1 || die "dockerd not found (package docker.io)"
  mkdir -p "$RUN_DIR"
  local pidfile="$RUN_DIR/dockerd.pid" log="$RUN_DIR/dockerd.log" pid="" attempt
  if pid="$(read_pid "$pidfile")" && pid_matches "$pid" dockerd; then
    say "waiting for dockerd (pid $pid, started earlier by tools/)"
    wait_for_dockerd "$pid" && return 0
    show_log_tail "$log"
    die "dockerd (pid $pid) did not answer on $DOCKER_SOCK (log: .run/dockerd.log)"
  fi
  remove_stale_pid_file /var/run/docker.pid dockerd
  remove_stale_pid_file /var/run/docker/containerd/containerd.pid containerd
  for ((attempt = 1; attempt <= DOCKERD_START_ATTEMPTS; attempt++)); do
    say "starting dockerd (attempt $attempt of $DOCKERD_START_ATTEMPTS, log: .run/dockerd.log)"
    rm -f "$pidfile"
    # The shell records its own PID, then becomes dockerd: the PID file names dockerd itself.
    as_root setsid sh -c 'echo $$ > "$1"; shift; exec dockerd "$@"' sh "$pidfile" "${DOCKERD_ARGS[@]}" \
      </dev/null >"$log" 2>&1 &
    disown # not a job of the calling shell: its end is never reported after tools/test's last line
    if wait_for_dockerd ""; then
      return 0
    fi
    cp -f "$log" "$log.$attempt"
    show_log_tail "$log" 15
    if pid="$(read_pid "$pidfile" 2>/dev/null)" && pid_matches "$pid" dockerd; then
      die "dockerd (pid $pid) is running but did not answer on $DOCKER_SOCK within 90 s (log: .run/dockerd.log)"
    fi
    if grep -q 'timeout waiting for containerd' "$log"; then
      warn "dockerd exited: its containerd took longer than dockerd's 15 s to start (cleaning up tasks of an earlier run); starting it again"
    else
      warn "dockerd exited before answering (log: .run/dockerd.log.$attempt)"
    fi
  done
  die "dockerd exited before answering, $DOCKERD_START_ATTEMPTS times (logs: .run/dockerd.log.1 to .$DOCKERD_START_ATTEMPTS)"
}

# remove_stale_pid_file FILE TEXT — delete a PID file that dockerd or its containerd left behind
# when the process it names is gone, or is now another program (its PID reused). Only called before
# we start a dockerd ourselves. Needed because /run is on disk here, so it outlives the machine's
# processes: dockerd refuses to start while /var/run/docker.pid names a live process ("pid file
# found, ensure docker is not running"), and believes a reused PID in containerd.pid is its
# containerd, which it would then signal.
remove_stale_pid_file() {
  local file=$1 text=$2 pid
  [ -e "$file" ] || return 0
  if pid="$(read_pid "$file")" && pid_matches "$pid" "$text"; then
    return 0
  fi
  say "removing $file (it names no running $text)"
  as_root rm -f "$file"
}

# wait_for_dockerd PID — poll DOCKER_SOCK for up to 90 s; true once dockerd answers, false at the
# deadline or as soon as the dockerd (PID, else the one named in .run/dockerd.pid) has exited.
wait_for_dockerd() {
  local pid=$1 pidfile="$RUN_DIR/dockerd.pid" deadline=$((SECONDS + 90)) polls=0
  while ((SECONDS < deadline)); do
    if docker_answers; then
      say "dockerd is up"
      return 0
    fi
    [ -n "$pid" ] || pid="$(read_pid "$pidfile" 2>/dev/null)" || pid=""
    # (the first polls may come before the PID file is written)
    ((++polls))
    if [ -n "$pid" ] && ((polls > 5)) && ! pid_matches "$pid" dockerd; then
      return 1
    fi
    if [ -z "$pid" ] && ((polls > 50)); then
      return 1
    fi
    sleep 0.1
  done
  return 1
}

# build_project — `npm run build` (tsc → dist/) unless dist/ is newer than every source, tsconfig and
# package file (time stamp .run/build.stamp, taken before the build so edits made during it count).
build_project() {
  mkdir -p "$RUN_DIR"
  local stamp="$RUN_DIR/build.stamp" inputs=() p
  for p in src bench tsconfig.json package.json package-lock.json; do
    [ -e "$KTS_ROOT/$p" ] && inputs+=("$KTS_ROOT/$p")
  done
  if [ -d "$KTS_ROOT/dist" ] && [ -f "$stamp" ] &&
    [ -z "$(find "${inputs[@]}" -newer "$stamp" -print -quit 2>/dev/null)" ]; then
    return 0
  fi
  say "building (npm run build, log: .run/build.log)"
  touch "$stamp.new"
  if ! (cd "$KTS_ROOT" && npm run build) >"$RUN_DIR/build.log" 2>&1; then
    rm -f "$stamp.new"
    show_log_tail "$RUN_DIR/build.log" 60
    die "build failed (log: .run/build.log)"
  fi
  mv -f "$stamp.new" "$stamp"
}

# shellcheck source=tools/lib/images.sh
. "$KTS_ROOT/tools/lib/images.sh"

# prepare — the preparation shared by tools/up and tools/test: system packages, npm packages,
# dockerd, the local images and the build. Idempotent; a second run does only checks.
prepare() {
  ensure_system_packages
  ensure_node_modules
  ensure_dockerd
  ensure_images
  build_project
}
