#!/usr/bin/env bash
# tools/lib/containerd.sh — a containerd of our own with the CRI plugin, for the CRI client's
# integration tests and the containerd runtime of issue #40 (the role of Kubernetes' node e2e
# setup of a CRI runtime: test/e2e_node/remote, and of containerd's own CRI config,
# docs/cri/config.md). Docker's containerd runs with the CRI plugin disabled, so this one is
# separate: its own root, state, socket, CNI config and log, all under .run/containerd/.
#
#   socket        .run/containerd/containerd.sock  (the endpoint: unix://<that path, resolved>)
#   config        .run/containerd/config.toml      (written by every `up`)
#   pid / log     .run/containerd/containerd.pid / containerd.log
#   CNI           .run/containerd/net.d/10-kts-cri.conflist, plugins from /usr/lib/cni: bridge
#                 $CONTAINERD_CNI_BRIDGE over $CONTAINERD_CNI_SUBNET (not the agent's
#                 10.222.0.0/16 nor its kts-XXXXXXXX bridges), no masquerade, no default route
#                 in the pods (a pod reaches the host's bridge address and its subnet, nothing else)
#   registries    the test registries of tools/lib/registry.sh (their ports), plain http, in
#                 .run/containerd/certs.d/HOST:PORT/hosts.toml (the registry config_path); no
#                 credentials in the config: the client passes them with PullImage, as the kubelet does
#   images        kubelet-ts/pause:1.0 (the sandbox image) and kubelet-ts/busybox:1.35, imported
#                 from Docker into the k8s.io namespace, again whenever their source hash changes
#   settings      .run/containerd.env (sourceable, read by the vitest suites):
#                 KUBELET_TS_CRI_ENDPOINT=unix:///…/containerd.sock
#
# On these machines a negative oom_score_adj is refused, so restrict_oom_score_adj = true (else
# every sandbox fails: "failed to update /proc/self/oom_score_adj: Permission denied").
#
# Sourced by tools/lib/services.sh (then call `containerd_up`), or run directly:
#   tools/lib/containerd.sh up       start it unless it runs, import the images (idempotent)
#   tools/lib/containerd.sh down     stop it (only the PID recorded here, SIGKILL after 20 s); pods
#                                    it runs keep running in their shims (as across any containerd
#                                    restart) and the next `up` finds them; root and state are kept
#   tools/lib/containerd.sh status   say whether it runs and answers (exit 0) or not (exit 1)

CONTAINERD_CNI_BRIDGE=kts-cri0
CONTAINERD_CNI_SUBNET=10.223.0.0/16
CONTAINERD_CNI_GATEWAY=10.223.0.1

_containerd_lib_init() {
  if [ -z "${KTS_ROOT:-}" ]; then
    # shellcheck source=tools/lib/common.sh
    . "$(dirname "${BASH_SOURCE[0]}")/common.sh"
  fi
  mkdir -p "$RUN_DIR"
  # The physical path: .run may be a link shared by several checkouts, and the PID check and the
  # socket must name one containerd whichever checkout asks.
  CONTAINERD_DIR="$(cd "$RUN_DIR" && pwd -P)/containerd"
  CONTAINERD_SOCK="$CONTAINERD_DIR/containerd.sock"
  CONTAINERD_CONFIG="$CONTAINERD_DIR/config.toml"
  CONTAINERD_PID="$CONTAINERD_DIR/containerd.pid"
  CONTAINERD_LOG="$CONTAINERD_DIR/containerd.log"
  CONTAINERD_ENV="$RUN_DIR/containerd.env"
}

# _containerd_write_config — config.toml (version 2) and the CNI conflist.
_containerd_write_config() {
  local d=$CONTAINERD_DIR cri='plugins."io.containerd.grpc.v1.cri"'
  mkdir -p "$d/root" "$d/state" "$d/opt" "$d/net.d"
  {
    printf 'version = 2\nroot = "%s"\nstate = "%s"\noom_score = 0\n\n' "$d/root" "$d/state"
    printf '[grpc]\n  address = "%s"\n\n' "$CONTAINERD_SOCK"
    printf '[ttrpc]\n  address = "%s"\n\n' "$d/containerd.sock.ttrpc"
    printf '[plugins."io.containerd.internal.v1.opt"]\n  path = "%s"\n\n' "$d/opt"
    printf '[%s]\n  sandbox_image = "%s"\n  restrict_oom_score_adj = true\n' "$cri" "$PAUSE_IMAGE"
    printf '  stream_server_address = "127.0.0.1"\n  stream_server_port = "0"\n  enable_selinux = false\n\n'
    printf '[%s.containerd]\n  snapshotter = "overlayfs"\n  default_runtime_name = "runc"\n\n' "$cri"
    printf '[%s.containerd.runtimes.runc]\n  runtime_type = "io.containerd.runc.v2"\n\n' "$cri"
    # runc's state under ours too (its default, /run/containerd/runc, is the system containerd's).
    printf '[%s.containerd.runtimes.runc.options]\n  Root = "%s"\n\n' "$cri" "$d/state/runc"
    printf '[%s.cni]\n  bin_dir = "/usr/lib/cni"\n  conf_dir = "%s"\n  max_conf_num = 1\n\n' "$cri" "$d/net.d"
    printf '[%s.registry]\n  config_path = "%s"\n' "$cri" "$d/certs.d"
  } >"$CONTAINERD_CONFIG.new"
  mv -f "$CONTAINERD_CONFIG.new" "$CONTAINERD_CONFIG"
  # One hosts.toml per test registry (containerd's docs/hosts.md; `mirrors` is deprecated): plain http.
  local port
  for port in "${REGISTRY_PORT:-5055}" "${REGISTRY_AUTH_PORT:-5056}"; do
    mkdir -p "$d/certs.d/127.0.0.1:$port"
    printf 'server = "http://127.0.0.1:%s"\n\n[host."http://127.0.0.1:%s"]\n  capabilities = ["pull", "resolve"]\n' \
      "$port" "$port" >"$d/certs.d/127.0.0.1:$port/hosts.toml"
  done
  cat >"$d/net.d/10-kts-cri.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "kts-cri",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$CONTAINERD_CNI_BRIDGE",
      "isGateway": true,
      "isDefaultGateway": false,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "ranges": [[{ "subnet": "$CONTAINERD_CNI_SUBNET", "gateway": "$CONTAINERD_CNI_GATEWAY" }]],
        "dataDir": "$d/cni-ipam"
      }
    }
  ]
}
JSON
}

# _containerd_alive — true while the recorded PID runs containerd with our config.
_containerd_alive() {
  local pid
  pid="$(read_pid "$CONTAINERD_PID")" && pid_matches "$pid" "$CONTAINERD_CONFIG"
}

# _ctr ARGS... — ctr against our containerd, in the CRI's k8s.io namespace.
_ctr() { ctr --address "$CONTAINERD_SOCK" --namespace k8s.io "$@"; }

# _containerd_answers — true when our containerd answers (ctr version, within 5 s).
_containerd_answers() {
  [ -S "$CONTAINERD_SOCK" ] && timeout 5 ctr --address "$CONTAINERD_SOCK" version >/dev/null 2>&1
}

# _containerd_image_hash REF — the kubelet-ts.source-hash label of REF in containerd, empty if none.
_containerd_image_hash() {
  _ctr images ls "name==docker.io/$1" 2>/dev/null | awk 'NR > 1 { print $NF }' |
    tr ',' '\n' | sed -n "s/^$SOURCE_HASH_LABEL=//p" | head -n1
}

# _containerd_import IMAGE — import IMAGE from Docker unless containerd holds it with the same
# source hash (the label tools/lib/images.sh puts on it); then label it with that hash.
_containerd_import() {
  local image=$1 want
  want="$(image_current_hash "$image")"
  [ -n "$want" ] || die "image $image is not in Docker (tools/lib/images.sh builds it: run tools/test or tools/up)"
  [ "$(_containerd_image_hash "$image")" = "$want" ] && return 0
  say "importing $image into containerd (k8s.io namespace)"
  if ! dk save "$image" | _ctr images import - >>"$CONTAINERD_DIR/import.log" 2>&1; then
    show_log_tail "$CONTAINERD_DIR/import.log"
    die "importing $image into containerd failed (log: .run/containerd/import.log)"
  fi
  _ctr images label "docker.io/$image" "$SOURCE_HASH_LABEL=$want" >/dev/null
}

# containerd_up — write the config, start containerd unless ours runs (setsid, PID file, log),
# wait up to 30 s for it to answer, import the local images, write .run/containerd.env. Idempotent.
containerd_up() {
  _containerd_lib_init
  if ! command -v containerd >/dev/null 2>&1 || ! command -v ctr >/dev/null 2>&1; then
    local SYSTEM_PACKAGES=(containerd) # docker.io brings it; another Docker engine package may not
    ensure_system_packages
  fi
  command -v containerd >/dev/null 2>&1 || die "containerd not found (package containerd)"
  [ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/loopback ] ||
    die "the CNI plugins bridge, host-local and loopback are missing from /usr/lib/cni (package containernetworking-plugins)"
  mkdir -p "$CONTAINERD_DIR"
  if ! _containerd_alive; then
    _containerd_write_config
    rm -f "$CONTAINERD_SOCK"
    say "starting containerd with the CRI plugin (log: .run/containerd/containerd.log)"
    # The shell records its own PID, then becomes containerd: the PID file names containerd itself.
    as_root setsid sh -c 'echo $$ > "$1"; shift; exec containerd "$@"' sh "$CONTAINERD_PID" \
      --config "$CONTAINERD_CONFIG" </dev/null >>"$CONTAINERD_LOG" 2>&1 &
    disown # not a job of the calling shell (see etcd.sh)
  fi
  local i
  for ((i = 0; i < 300; i++)); do
    _containerd_answers && break
    if ((i > 20)) && ! _containerd_alive; then
      show_log_tail "$CONTAINERD_LOG"
      die "containerd exited before answering on $CONTAINERD_SOCK (log: .run/containerd/containerd.log)"
    fi
    sleep 0.1
  done
  _containerd_answers || { show_log_tail "$CONTAINERD_LOG"; die "containerd did not answer on $CONTAINERD_SOCK within 30 s"; }
  _containerd_import "$PAUSE_IMAGE"
  _containerd_import "$BUSYBOX_IMAGE"
  printf 'KUBELET_TS_CRI_ENDPOINT=unix://%s\n' "$CONTAINERD_SOCK" >"$CONTAINERD_ENV"
  say "containerd (CRI) up on unix://$CONTAINERD_SOCK"
}

# containerd_running — true while the containerd started here runs.
containerd_running() {
  _containerd_lib_init
  _containerd_alive
}

# containerd_down — stop our containerd by its PID file (SIGTERM, SIGKILL after 20 s). Pods it ran
# keep their shims (as with any containerd restart); the next `up` finds them again.
containerd_down() {
  _containerd_lib_init
  stop_pid_file "$CONTAINERD_PID" "$CONTAINERD_CONFIG" "containerd (CRI)" 20 kill
  rm -f "$CONTAINERD_ENV"
}

# containerd_status — print whether ours runs and answers; exit 0 only when it does.
containerd_status() {
  _containerd_lib_init
  if _containerd_alive && _containerd_answers; then
    say "containerd (CRI) runs (pid $(read_pid "$CONTAINERD_PID")) and answers on unix://$CONTAINERD_SOCK"
    return 0
  fi
  if _containerd_alive; then
    say "containerd (CRI) runs (pid $(read_pid "$CONTAINERD_PID")) but does not answer on $CONTAINERD_SOCK"
  else
    say "no containerd started by tools/ is running"
  fi
  return 1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  case "${1:-}" in
    up) containerd_up ;;
    down) containerd_down ;;
    status) containerd_status ;;
    *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
  esac
fi
