#!/usr/bin/env bash
# Runs the test suite under AddressSanitizer and ThreadSanitizer, each in its own build folder.
# Usage: scripts/sanitize.sh [--filter REGEX] [address] [thread]   (default: both, every test)
# LeakSanitizer reports from the toolchain's own XCTest and Foundation.Process internals are
# suppressed by their exact frames (scripts/lsan.supp), never by a whole library.
# ThreadSanitizer runs without suppressions; its default one-second sleep at process exit is
# turned off, because tests time child processes against their deadlines.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
filter=()
if [ "${1:-}" = "--filter" ]; then
  filter=(--filter "$2")
  shift 2
fi
kinds=("$@")
((${#kinds[@]})) || kinds=(address thread)
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp"
export TSAN_OPTIONS="atexit_sleep_ms=0 second_deadlock_stack=1"
for kind in "${kinds[@]}"; do
  echo "== swift test --sanitize=$kind ${filter[*]}"
  swift build --build-tests --sanitize="$kind" --scratch-path ".build-$kind"
  swift test --skip-build --no-parallel --sanitize="$kind" --scratch-path ".build-$kind" "${filter[@]}"
done
