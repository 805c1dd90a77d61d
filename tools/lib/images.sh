# tools/lib/images.sh — the two local images, built from local files only (nothing is pulled);
# the role of kubernetes/build/pause (the sandbox image) and of the e2e test images.
#
# Sourced by tools/lib/common.sh. Each image carries the label $SOURCE_HASH_LABEL: a sha256 over
# everything it is built from (source files, the busybox binary, the compiler version and the text
# of its build function). ensure_images rebuilds an image only when it is missing or that hash changed.
#
#   kubelet-ts/pause:1.0     /pause, tools/pause/pause.c compiled with gcc -static -O2; CMD ["/pause"]
#   kubelet-ts/busybox:1.35  /bin/busybox from Debian's busybox-static, a link in /bin and /usr/bin for
#                            every applet, /tmp (1777), /root, /etc/passwd and /etc/group with root and
#                            nobody (tools/images/busybox/etc); CMD ["/bin/sh"]

# image_source_hash PART... — sha256 over its arguments (file hashes, versions, recipe text).
image_source_hash() {
  printf '%s\n' "$@" | sha256sum | cut -c1-64
}

# image_current_hash IMAGE — the source-hash label of IMAGE, empty if the image or label is absent.
image_current_hash() {
  dk image inspect --format "{{ index .Config.Labels \"$SOURCE_HASH_LABEL\" }}" "$1" 2>/dev/null || true
}

# image_id IMAGE — the image ID, empty if absent.
image_id() {
  dk image inspect --format '{{.Id}}' "$1" 2>/dev/null || true
}

# busybox_binary — path of the static busybox installed by Debian's busybox-static.
busybox_binary() {
  local bb
  bb="$(dpkg -L busybox-static 2>/dev/null | grep -m1 '/busybox$' || true)"
  [ -n "$bb" ] && [ -x "$bb" ] || die "busybox-static is not installed (no static busybox binary found)"
  printf '%s\n' "$bb"
}

# import_rootfs DIR IMAGE CMD_JSON HASH — tar DIR (owned by root) into `docker import` as IMAGE.
# The image IMAGE pointed to before, if any, is removed when no container uses it any more.
import_rootfs() {
  local dir=$1 image=$2 cmd=$3 hash=$4 old
  old="$(image_id "$image")"
  tar --numeric-owner --owner=0 --group=0 -C "$dir" -c . |
    dk import --change "CMD $cmd" --change "LABEL $SOURCE_HASH_LABEL=$hash" - "$image" >/dev/null
  if [ -n "$old" ] && [ "$old" != "$(image_id "$image")" ]; then
    dk image rm "$old" >/dev/null 2>&1 || true # still used by a container: leave it
  fi
}

# build_pause_image HASH — compile tools/pause/pause.c statically and import it as PAUSE_IMAGE.
build_pause_image() {
  local hash=$1 dir
  dir="$(mktemp -d)"
  if ! gcc -static -O2 -Wall -o "$dir/pause" "$KTS_ROOT/tools/pause/pause.c"; then
    rm -rf "$dir"
    die "gcc failed to build tools/pause/pause.c"
  fi
  strip "$dir/pause" 2>/dev/null || true
  import_rootfs "$dir" "$PAUSE_IMAGE" '["/pause"]' "$hash"
  rm -rf "$dir"
}

# build_busybox_image BUSYBOX HASH — a rootfs around the static BUSYBOX, imported as BUSYBOX_IMAGE.
build_busybox_image() {
  local bb=$1 hash=$2 dir applet
  dir="$(mktemp -d)"
  mkdir -p "$dir/bin" "$dir/usr/bin" "$dir/etc" "$dir/tmp" "$dir/root"
  chmod 1777 "$dir/tmp"
  chmod 700 "$dir/root"
  cp "$bb" "$dir/bin/busybox"
  chmod 755 "$dir/bin/busybox"
  ln -s /bin/busybox "$dir/usr/bin/busybox"
  for applet in $("$bb" --list); do
    [ "$applet" = busybox ] && continue
    ln -sf /bin/busybox "$dir/bin/$applet"
    ln -sf /bin/busybox "$dir/usr/bin/$applet"
  done
  install -m 644 "$KTS_ROOT/tools/images/busybox/etc/passwd" "$KTS_ROOT/tools/images/busybox/etc/group" "$dir/etc/"
  import_rootfs "$dir" "$BUSYBOX_IMAGE" '["/bin/sh"]' "$hash"
  rm -rf "$dir"
}

# ensure_images — build PAUSE_IMAGE and BUSYBOX_IMAGE if missing or built from other sources.
ensure_images() {
  local want bb
  want="$(image_source_hash \
    "$(sha256sum <"$KTS_ROOT/tools/pause/pause.c")" \
    "$(gcc -dumpfullversion 2>/dev/null || echo no-gcc)" \
    "$(declare -f build_pause_image import_rootfs)")"
  if [ "$(image_current_hash "$PAUSE_IMAGE")" != "$want" ]; then
    command -v gcc >/dev/null 2>&1 || die "gcc not found (packages gcc, libc6-dev)"
    say "building image $PAUSE_IMAGE"
    build_pause_image "$want"
  fi

  bb="$(busybox_binary)"
  want="$(image_source_hash \
    "$(sha256sum <"$bb")" \
    "$(cat "$KTS_ROOT/tools/images/busybox/etc/passwd" "$KTS_ROOT/tools/images/busybox/etc/group")" \
    "$(declare -f build_busybox_image import_rootfs)")"
  if [ "$(image_current_hash "$BUSYBOX_IMAGE")" != "$want" ]; then
    say "building image $BUSYBOX_IMAGE"
    build_busybox_image "$bb" "$want"
  fi
}
