#!/usr/bin/env bash
# The README's main job: serve Samples/media from a loopback server, fetch every sample, and
# print a table of what happened. Leaves no server running.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
swift build -c release --product attachkit >/dev/null
swift build -c release --product sample-server >/dev/null
bin=$(swift build -c release --show-bin-path)

work=$(mktemp -d)
port_file="$work/port"
"$bin/sample-server" Samples/media >"$port_file" &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do [ -s "$port_file" ] && break; sleep 0.05; done
base=$(head -1 "$port_file")

urls=()
while IFS=$'\t' read -r file expect _; do
  [ "$file" = "file" ] && continue
  urls+=("$base/media/$file")
done <Samples/media/manifest.tsv

"$bin/attachkit" fetch --dir "$work/downloads" "${urls[@]}"
