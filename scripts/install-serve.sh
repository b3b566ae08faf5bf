#!/usr/bin/env bash
# Installs `attachkit serve` as docs/deploy.md's "From a fresh machine" does: the programs, a
# signing key, the systemd unit; then checks each. Usage:
#   scripts/install-serve.sh BIN_DIR [--root DIR]
# BIN_DIR holds the built `attachkit` and `attachkit-rescue-worker` (scripts/build-static.sh
# prints it). With --root DIR everything goes under DIR (a test, an image being built) and
# systemd is not told; without it, under / and `systemctl daemon-reload` when systemd runs.
# An existing key file is kept (rotating keys is docs/deploy.md's "Rotating keys").
# Exit 0 when every check passed: the programs run, the key file is the owner's alone and holds
# a key, and `systemd-analyze verify` loads the unit without a complaint (where it is installed).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 BIN_DIR [--root DIR]" >&2; exit 2; }
bin=$1
shift
root=""
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root=${2:?--root needs a directory}; shift 2 ;;
    *) echo "install-serve: unknown argument $1" >&2; exit 2 ;;
  esac
done
for program in attachkit attachkit-rescue-worker; do
  [ -x "$bin/$program" ] || { echo "install-serve: $bin/$program is missing (build it: scripts/build-static.sh)" >&2; exit 1; }
done

programs="$root/usr/local/bin"
etc="$root/etc/attachkit"
units="$root/etc/systemd/system"
install -d -m 755 "$programs" "$units"
# The rescue worker beside the program: serve --rescue starts it from there.
install -m 755 "$bin/attachkit" "$bin/attachkit-rescue-worker" "$programs/"
"$programs/attachkit" --version >/dev/null
echo "install-serve: installed $("$programs/attachkit" --version) in $programs" >&2

install -d -m 700 "$etc"
if [ -s "$etc/keys" ]; then
  echo "install-serve: $etc/keys exists; kept" >&2
else
  (umask 077 && openssl rand -hex 32 >"$etc/keys")
  echo "install-serve: wrote a new signing key to $etc/keys (mode 600)" >&2
fi
chmod 600 "$etc/keys"
grep -Eq '^[0-9a-f]{32,}$' "$etc/keys" || { echo "install-serve: $etc/keys holds no hex key" >&2; exit 1; }

unit="$units/attachkit.service"
if [ -z "$root" ]; then
  install -m 644 docs/attachkit.service "$unit"
else
  # Under --root the unit names the programs where they were put, so that verify finds them.
  sed "s#/usr/local/bin/attachkit#$programs/attachkit#g" docs/attachkit.service >"$unit"
  chmod 644 "$unit"
fi
if command -v systemd-analyze >/dev/null; then
  report=$(systemd-analyze verify "$unit" 2>&1) || { echo "$report" >&2; echo "install-serve: systemd-analyze verify failed" >&2; exit 1; }
  if grep -q 'attachkit.service:' <<<"$report"; then
    echo "$report" >&2
    echo "install-serve: systemd-analyze verify complains about the unit" >&2
    exit 1
  fi
  echo "install-serve: systemd-analyze verify $unit: no complaint" >&2
else
  echo "install-serve: systemd-analyze is not installed; the unit was not verified" >&2
fi
if [ -z "$root" ] && [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  echo "install-serve: next, edit ExecStart's addresses (systemctl edit --full attachkit), then: systemctl enable --now attachkit" >&2
fi
echo "install-serve: done" >&2
