# tools/lib/chromium.sh — make Debian's `chromium` available for the dashboard's browser test
# (test/e2e/dashboard.browser.test.ts drives it with playwright-core at /usr/bin/chromium).
#
# Sourced after tools/lib/common.sh (uses pkg_installed, as_root, say, die, show_log_tail, RUN_DIR).
# ensure_chromium — apt-get install chromium when /usr/bin/chromium is missing (apt-get update first).
ensure_chromium() {
  if [ -x /usr/bin/chromium ]; then
    return 0
  fi
  command -v apt-get >/dev/null 2>&1 || die "chromium is missing and there is no apt-get to install it (Debian 12 expected)"
  mkdir -p "$RUN_DIR"
  local log="$RUN_DIR/apt-chromium.log"
  say "installing chromium (log: .run/apt-chromium.log)"
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update >"$log" 2>&1; then
    show_log_tail "$log"
    die "apt-get update failed (log: .run/apt-chromium.log)"
  fi
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends chromium >>"$log" 2>&1; then
    show_log_tail "$log"
    die "apt-get install chromium failed (log: .run/apt-chromium.log)"
  fi
  [ -x /usr/bin/chromium ] || die "chromium was installed but /usr/bin/chromium is missing"
}
