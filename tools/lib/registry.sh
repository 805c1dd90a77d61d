#!/usr/bin/env bash
# tools/lib/registry.sh — the local image registries the image tests pull from (the role of the
# e2e suite's private registry, test/e2e/common/node/runtime.go "should be able to pull from
# private registry"): Debian's docker-registry (Distribution v2), on 127.0.0.1 only, data under
# .run/registry/.
#
#   open  registry  127.0.0.1:$REGISTRY_PORT       no auth
#   auth  registry  127.0.0.1:$REGISTRY_AUTH_PORT  htpasswd auth, user $REGISTRY_USER / $REGISTRY_PASSWORD
#
# Both hold the test image, pushed as 127.0.0.1:PORT/kubelet-ts/busybox:1.35 (the local tag is
# removed after the push, so a test that wants it must really pull). Docker treats registries on
# 127.0.0.0/8 as insecure-OK: plain HTTP, no daemon flag needed.
#
# Sourced by tools/test (then call `registry_up`), or run directly:
#   tools/lib/registry.sh up      install docker-registry/apache2-utils if missing, start both (idempotent)
#   tools/lib/registry.sh down    stop both (by PID file) and remove their data
#
# Settings for the suites are written to .run/registry.env (sourceable, read by the vitest suites):
#   KUBELET_TS_REGISTRY=127.0.0.1:5055
#   KUBELET_TS_REGISTRY_AUTH=127.0.0.1:5056
#   KUBELET_TS_REGISTRY_USER=kts  KUBELET_TS_REGISTRY_PASSWORD=...

REGISTRY_PORT=${REGISTRY_PORT:-5055}
REGISTRY_AUTH_PORT=${REGISTRY_AUTH_PORT:-5056}
REGISTRY_USER=kts
REGISTRY_PASSWORD=kts-registry-test
REGISTRY_IMAGE_PATH=kubelet-ts/busybox:1.35

_registry_lib_init() {
  if [ -z "${KTS_ROOT:-}" ]; then
    # shellcheck source=tools/lib/common.sh
    . "$(dirname "${BASH_SOURCE[0]}")/common.sh"
  fi
  REGISTRY_DIR="$RUN_DIR/registry"
  REGISTRY_ENV="$RUN_DIR/registry.env"
}

# _registry_config NAME PORT AUTH — write the Distribution config of one registry.
_registry_config() {
  local name=$1 port=$2 auth=$3
  mkdir -p "$REGISTRY_DIR/$name/data"
  {
    printf 'version: 0.1\nlog:\n  level: warn\n  accesslog:\n    disabled: true\n'
    printf 'storage:\n  filesystem:\n    rootdirectory: %s\n  delete:\n    enabled: true\n' "$REGISTRY_DIR/$name/data"
    printf 'http:\n  addr: 127.0.0.1:%s\n' "$port"
    if [ "$auth" = yes ]; then
      printf 'auth:\n  htpasswd:\n    realm: kubelet-ts-test\n    path: %s\n' "$REGISTRY_DIR/$name/htpasswd"
    fi
  } >"$REGISTRY_DIR/$name/config.yml"
  if [ "$auth" = yes ]; then
    htpasswd -Bbn "$REGISTRY_USER" "$REGISTRY_PASSWORD" >"$REGISTRY_DIR/$name/htpasswd" 2>/dev/null ||
      die "htpasswd failed (package apache2-utils)"
  fi
}

# _registry_alive NAME — true while the registry's recorded PID runs docker-registry with its config.
_registry_alive() {
  local pid
  pid="$(read_pid "$REGISTRY_DIR/$1.pid")" && pid_matches "$pid" "$REGISTRY_DIR/$1/config.yml"
}

# _registry_answers PORT — true when GET /v2/ answers (200, or 401 for the auth one).
_registry_answers() {
  local code
  code="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/v2/" 2>/dev/null || true)"
  [ "$code" = 200 ] || [ "$code" = 401 ]
}

# _registry_start NAME PORT AUTH — start one registry unless it already runs; wait until it answers.
_registry_start() {
  local name=$1 port=$2 auth=$3 i
  if ! _registry_alive "$name"; then
    _registry_config "$name" "$port" "$auth"
    # Distribution reads REGISTRY_<SECTION>_<KEY> variables as config overrides: our own
    # REGISTRY_PORT / REGISTRY_AUTH_PORT (e.g. `auth.port`) must not reach it.
    setsid sh -c 'echo $$ > "$1"; shift; exec "$@"' sh "$REGISTRY_DIR/$name.pid" \
      env -u REGISTRY_PORT -u REGISTRY_AUTH_PORT docker-registry serve "$REGISTRY_DIR/$name/config.yml" \
      </dev/null >>"$REGISTRY_DIR/$name.log" 2>&1 &
    disown # not a job of the calling shell (see etcd.sh)
  fi
  for ((i = 0; i < 100; i++)); do
    if _registry_answers "$port"; then
      # An answer is not enough: another checkout's registry may hold the port while ours exited
      # ("address already in use"), and we would push to, and test against, a registry we do not own.
      # Give ours a moment to fail its bind before trusting the answer.
      sleep 0.3
      _registry_alive "$name" && return 0
      show_log_tail "$REGISTRY_DIR/$name.log"
      die "registry $name exited while 127.0.0.1:$port answers: another registry (another checkout's tools/lib/registry.sh up?) holds the port; stop that one first (log: .run/registry/$name.log)"
    fi
    sleep 0.1
  done
  show_log_tail "$REGISTRY_DIR/$name.log"
  die "registry $name did not answer on 127.0.0.1:$port (log: .run/registry/$name.log)"
}

# _registry_push PORT [LOGIN] — push BUSYBOX_IMAGE as 127.0.0.1:PORT/$REGISTRY_IMAGE_PATH, then drop the tag.
_registry_push() {
  local port=$1 login=${2:-} ref="127.0.0.1:$1/$REGISTRY_IMAGE_PATH" cfg
  cfg="$(mktemp -d)"
  if [ -n "$login" ]; then
    printf '%s' "$REGISTRY_PASSWORD" | dk --config "$cfg" login -u "$REGISTRY_USER" --password-stdin "127.0.0.1:$port" >/dev/null 2>&1 ||
      { rm -rf "$cfg"; die "docker login to 127.0.0.1:$port failed"; }
  fi
  dk tag "$BUSYBOX_IMAGE" "$ref"
  if ! dk --config "$cfg" push "$ref" >"$REGISTRY_DIR/push.log" 2>&1; then
    dk rmi "$ref" >/dev/null 2>&1 || true
    rm -rf "$cfg"
    show_log_tail "$REGISTRY_DIR/push.log"
    die "docker push $ref failed"
  fi
  dk rmi "$ref" >/dev/null 2>&1 || true
  rm -rf "$cfg"
}

# registry_up — install, start both registries, push the test image, write .run/registry.env.
registry_up() {
  _registry_lib_init
  local SYSTEM_PACKAGES=(docker-registry apache2-utils curl)
  ensure_system_packages
  mkdir -p "$REGISTRY_DIR"
  _registry_start open "$REGISTRY_PORT" no
  _registry_start auth "$REGISTRY_AUTH_PORT" yes
  _registry_push "$REGISTRY_PORT"
  _registry_push "$REGISTRY_AUTH_PORT" login
  cat >"$REGISTRY_ENV" <<ENV
KUBELET_TS_REGISTRY=127.0.0.1:$REGISTRY_PORT
KUBELET_TS_REGISTRY_AUTH=127.0.0.1:$REGISTRY_AUTH_PORT
KUBELET_TS_REGISTRY_USER=$REGISTRY_USER
KUBELET_TS_REGISTRY_PASSWORD=$REGISTRY_PASSWORD
ENV
  say "registries up on 127.0.0.1:$REGISTRY_PORT and 127.0.0.1:$REGISTRY_AUTH_PORT (auth)"
}

# registry_running NAME — true while the registry NAME (open, auth) started here runs.
registry_running() {
  _registry_lib_init
  _registry_alive "$1"
}

# registry_stop NAME — stop one registry (open, auth) by its PID file; its data is kept.
registry_stop() {
  _registry_lib_init
  stop_pid_file "$REGISTRY_DIR/$1.pid" "$REGISTRY_DIR/$1/config.yml" "registry $1" 10 kill
}

# registry_down — stop both registries (only the PIDs recorded here) and remove their data.
registry_down() {
  _registry_lib_init
  local name
  for name in open auth; do
    registry_stop "$name"
  done
  rm -rf "$REGISTRY_DIR" "$REGISTRY_ENV"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  case "${1:-}" in
    up) registry_up ;;
    down) registry_down ;;
    *) echo "usage: $0 up|down" >&2; exit 2 ;;
  esac
fi
