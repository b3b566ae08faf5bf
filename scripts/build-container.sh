#!/usr/bin/env bash
# Builds the Containerfile: the release attachkit binary first, then the image with podman or
# buildah. Without either (or with --rootfs), it builds the image's root file system instead,
# debootstrap-free, from this Debian 12 machine's installed copies of the Containerfile's
# RUNTIME_PACKAGES and everything they depend on, and checks it the way the image would run:
# as uid 10001 in a chroot, `attachkit --version`, validate (libmagic), an image rescue (libvips),
# a media rescue (FFmpeg) and serve starting and draining (libmicrohttpd, libcurl, libssl).
# Usage: scripts/build-container.sh [--rootfs [DIR]]   (DIR: .build/container/rootfs)
# ATTACHKIT_BINARY=PATH uses that release binary (built with --static-swift-stdlib) instead.
set -euo pipefail
cd "$(dirname "$0")/.."

out=.build/container
rootfs_only=""
rootfs="$out/rootfs"
if [ "${1:-}" = "--rootfs" ]; then
  rootfs_only=1
  rootfs="${2:-$rootfs}"
fi
packages="$(sed -n 's/^ARG RUNTIME_PACKAGES="\(.*\)"$/\1/p' Containerfile)"
[ -n "$packages" ] || { echo "build-container: Containerfile has no ARG RUNTIME_PACKAGES=\"...\" line" >&2; exit 1; }

skip() {
  echo "build-container: SKIPPED: $*" >&2
  exit 0
}

build_binary() {
  if [ -n "${ATTACHKIT_BINARY:-}" ]; then # a release binary built already (CI's)
    mkdir -p "$out"
    cp "$ATTACHKIT_BINARY" "$out/attachkit"
    return
  fi
  echo "build-container: building attachkit (release, Swift runtime linked statically)"
  swift build -c release --static-swift-stdlib --product attachkit
  mkdir -p "$out"
  cp "$(swift build -c release --static-swift-stdlib --show-bin-path)/attachkit" "$out/attachkit"
}

# The installed packages among the names on standard input (dpkg-query fails on unknown names).
installed_only() {
  { xargs -r dpkg-query -W -f='${Package} ${db:Status-Status}\n' 2>/dev/null || true; } |
    awk '$2 == "installed" { print $1 }'
}

build_rootfs() {
  grep -q '^12\.' /etc/debian_version 2>/dev/null || skip "this machine is not Debian 12, whose packages the root file system is made of"
  local missing
  missing="$(comm -23 <(tr ' ' '\n' <<<"$packages" | sort -u) <(tr ' ' '\n' <<<"$packages" | installed_only | sort -u))"
  [ -z "$missing" ] || { echo "build-container: not installed here: $missing (scripts/install-deps.sh installs them)" >&2; exit 1; }
  # shellcheck disable=SC2086 # the package list splits into names
  closure="$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances $packages | grep -v '^ ' | grep -v '^<' | sort -u | installed_only)"
  echo "build-container: root file system in $rootfs from $(wc -w <<<"$closure") installed packages"
  rm -rf "$rootfs"
  mkdir -p "$rootfs"
  # Debian 12 is merged-/usr: /lib and the like are links into /usr, made before anything lands.
  for merged in bin sbin lib lib64; do
    if [ -L "/$merged" ]; then
      mkdir -p "$rootfs/usr/$merged"
      ln -s "usr/$merged" "$rootfs/$merged"
    fi
  done
  # shellcheck disable=SC2086
  dpkg -L $closure | sort -u | while read -r path; do
    if [ -e "$path" ] || [ -L "$path" ]; then echo "${path#/}"; fi
  done | tar -C / --no-recursion -cf - -T - | tar -C "$rootfs" --keep-directory-symlink -xf -
  # What maintainer scripts make rather than ship: alternatives, the CA bundle, the users.
  tar -C / -cf - etc/alternatives etc/ssl/certs | tar -C "$rootfs" -xf -
  mkdir -p "$rootfs/etc" "$rootfs/tmp" "$rootfs/dev" "$rootfs/proc" "$rootfs/usr/local/bin" "$rootfs/var/cache/attachkit" "$rootfs/etc/attachkit"
  chmod 1777 "$rootfs/tmp"
  printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nattachkit:x:10001:10001::/var/cache/attachkit:/usr/sbin/nologin\n' >"$rootfs/etc/passwd"
  printf 'root:x:0:\nattachkit:x:10001:\n' >"$rootfs/etc/group"
  chown 10001:10001 "$rootfs/var/cache/attachkit"
  chmod 0700 "$rootfs/var/cache/attachkit"
  cp "$out/attachkit" "$rootfs/usr/local/bin/attachkit"
  ldconfig -r "$rootfs"
  echo "build-container: root file system built: $(du -sh "$rootfs" | cut -f1)"
}

# Runs attachkit in the root file system as the image's user.
in_rootfs() {
  chroot --userspec=10001:10001 "$rootfs" /usr/local/bin/attachkit "$@"
}

# expect WHAT PATTERN ARGUMENTS...: runs attachkit ARGUMENTS in the root file system and fails
# unless its output holds PATTERN (whatever its exit status: a refusal exits 1).
expect() {
  local what="$1" pattern="$2" output
  shift 2
  output="$(in_rootfs "$@" 2>&1 || true)"
  grep -qF -- "$pattern" <<<"$output" || {
    echo "build-container: in the root file system, $what failed:" >&2
    echo "$output" >&2
    exit 1
  }
}

check_rootfs() {
  [ "$(id -u)" -eq 0 ] || skip "the root file system's checks need root (chroot); it is built in $rootfs"
  # A container has /dev and /proc (Swift reads its arguments from /proc/self/cmdline).
  mkdir -p "$rootfs/proc"
  mount --bind /dev "$rootfs/dev"
  trap 'umount "$rootfs/dev"' EXIT
  mount -t proc proc "$rootfs/proc"
  trap 'umount "$rootfs/proc"; umount "$rootfs/dev"' EXIT
  local samples=Samples/media work="$rootfs/tmp/check"
  mkdir -p "$work"
  cp "$samples/jpeg-exif.jpg" "$samples/html-error-page.html" "$samples/webp-lossy.webp" "$samples/webm-vp9.webm" "$work/"
  chown -R 10001:10001 "$work"
  in_rootfs --version
  expect 'validate: an accepted JPEG' '"outcome":"accepted"' validate --json /tmp/check/jpeg-exif.jpg
  expect 'validate: an HTML page named by libmagic' '"detected":"text/html"' validate --json /tmp/check/html-error-page.html
  expect 'rescue: WebP to JPEG with libvips' '"by":"image"' rescue --json /tmp/check/webp-lossy.webp -o /tmp/check/out.jpg
  expect 'rescue: WebM to MP4 with FFmpeg' '"by":"media"' rescue --json /tmp/check/webm-vp9.webm -o /tmp/check/out.mp4
  head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$rootfs/etc/attachkit/keys"
  echo >>"$rootfs/etc/attachkit/keys"
  chown 10001:10001 "$rootfs/etc/attachkit/keys"
  chmod 0600 "$rootfs/etc/attachkit/keys"
  local log="$work/serve.log" status=0
  ATTACHKIT_LISTEN=127.0.0.1:0 ATTACHKIT_KEY_FILE=/etc/attachkit/keys ATTACHKIT_CACHE_DIR=/var/cache/attachkit \
    timeout --preserve-status --signal=TERM 3 chroot --userspec=10001:10001 "$rootfs" /usr/local/bin/attachkit serve 2>"$log" || status=$?
  grep -q '"event":"listening"' "$log" && grep -q '"event":"stopped"' "$log" && [ "$status" -eq 0 ] || {
    echo "build-container: serve did not start and drain in the root file system (status $status):" >&2
    cat "$log" >&2
    exit 1
  }
  echo "build-container: checked in the root file system as uid 10001: --version, validate, image and media rescue, serve"
}

build_binary
if [ -z "$rootfs_only" ]; then
  for engine in podman buildah; do
    if command -v "$engine" >/dev/null; then
      [ "$engine" = podman ] && podman build -f Containerfile -t attachkit .
      [ "$engine" = buildah ] && buildah bud -f Containerfile -t attachkit .
      echo "build-container: image attachkit built with $engine"
      exit 0
    fi
  done
  echo "build-container: no podman or buildah here: SKIPPED the image; building its root file system instead" >&2
fi
build_rootfs
check_rootfs
