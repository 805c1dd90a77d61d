# tools/lib/netns-probe.sh — builds the probe helper that the agent runs inside a pod sandbox's
# network namespace for httpGet/tcpSocket probes and hooks of pods with network `none`
# (source tools/netns-probe/netns-probe.c; see src/workers/probes/net-probe.ts).
#
#   ensure_netns_probe   gcc -static -O2 → .run/bin/kubelet-ts-netns-probe, rebuilt when the source is newer

# ensure_netns_probe — build .run/bin/kubelet-ts-netns-probe if missing or older than its source.
ensure_netns_probe() {
  local src="$KTS_ROOT/tools/netns-probe/netns-probe.c" out="$KTS_ROOT/.run/bin/kubelet-ts-netns-probe"
  if [ -x "$out" ] && [ "$out" -nt "$src" ]; then
    return 0
  fi
  command -v gcc >/dev/null 2>&1 || die "gcc not found (packages gcc, libc6-dev)"
  mkdir -p "$(dirname "$out")"
  say "building .run/bin/kubelet-ts-netns-probe"
  gcc -static -O2 -Wall -o "$out.tmp" "$src" || die "gcc failed to build tools/netns-probe/netns-probe.c"
  strip "$out.tmp" 2>/dev/null || true
  mv -f "$out.tmp" "$out"
}
