# tools/lib/services.sh — the services tools/test starts for the suites (etcd, the two registries,
# the containerd with the CRI plugin of tools/lib/containerd.sh),
# and stopping at exit only those that this run started (the role of the cleanup trap in
# Kubernetes' hack/make-rules/test-integration.sh: kube::etcd::cleanup).
#
# Sourced after tools/lib/common.sh, etcd.sh and registry.sh (it sources containerd.sh). Callers:
#   test_services_up      start what is not running yet, remembering what this call started
#   test_services_down    stop what test_services_up started (nothing that was running before it);
#                         its messages go to .run/services.log, so a caller's last line stays last
# KEEP_SERVICES=1 keeps everything running (tools/test --keep sets it). dockerd is not one of these:
# it is shared with every agent on the machine; tools/down --all stops the one tools/ started.

TEST_SERVICES_STARTED=()
# shellcheck source=tools/lib/containerd.sh
. "$KTS_ROOT/tools/lib/containerd.sh"

# test_services_up — etcd_up, registry_up and containerd_up (after prepare: it imports the local
# images from Docker), noting each service that was not running before.
test_services_up() {
  TEST_SERVICES_STARTED=()
  etcd_running || TEST_SERVICES_STARTED+=(etcd)
  etcd_up
  local name
  for name in open auth; do
    registry_running "$name" || TEST_SERVICES_STARTED+=("registry-$name")
  done
  registry_up
  containerd_running || TEST_SERVICES_STARTED+=(containerd)
  containerd_up
}

# test_services_down — stop the services test_services_up started, unless KEEP_SERVICES=1.
# Never fails (an exit trap calls it); with KTS_SERVICES_DRY_RUN=1 it only says what it would stop.
test_services_down() {
  local s log="$RUN_DIR/services.log"
  [ ${#TEST_SERVICES_STARTED[@]} -gt 0 ] || return 0
  if [ "${KEEP_SERVICES:-}" = 1 ]; then
    printf '%s keeping %s (KEEP_SERVICES=1)\n' "$(date -u +%FT%TZ)" "${TEST_SERVICES_STARTED[*]}" >>"$log"
    return 0
  fi
  for s in "${TEST_SERVICES_STARTED[@]}"; do
    printf '%s stopping %s (started by this tools/test)\n' "$(date -u +%FT%TZ)" "$s" >>"$log"
    [ "${KTS_SERVICES_DRY_RUN:-}" = 1 ] && continue
    case "$s" in
      etcd) (etcd_down) >>"$log" 2>&1 || true ;;
      registry-*) (registry_stop "${s#registry-}") >>"$log" 2>&1 || true ;;
      containerd) (containerd_down) >>"$log" 2>&1 || true ;;
    esac
  done
  TEST_SERVICES_STARTED=()
}
