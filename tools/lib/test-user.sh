# tools/lib/test-user.sh — the second local user the security suites run as (a local non-root user
# of the node: the port-squat, token-file and file-mode cases of the least-privilege tests).
#
# Sourced after tools/lib/common.sh. ensure_test_user makes the system user `kts-tester` (no home,
# no login shell, no password) if it is missing; idempotent. Tests find it with `id -u kts-tester`
# and skip nothing: under KUBELET_TS_REQUIRE_DOCKER=1 (tools/test) a missing user fails the test.

KTS_TEST_USER=${KTS_TEST_USER:-kts-tester}

ensure_test_user() {
  id -u "$KTS_TEST_USER" >/dev/null 2>&1 && return 0
  say "adding the local test user $KTS_TEST_USER (for the least-privilege tests)"
  as_root useradd --system --no-create-home --shell /usr/sbin/nologin "$KTS_TEST_USER"
}
