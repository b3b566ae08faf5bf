#!/usr/bin/env bash
# Runs the whole test suite under AddressSanitizer and ThreadSanitizer, each in its own build
# folder. Usage: scripts/sanitize.sh [address] [thread]   (default: both)
# LeakSanitizer reports from the toolchain's own XCTest and Foundation are suppressed
# (scripts/lsan.supp). ThreadSanitizer runs without suppressions; its default one-second sleep
# at process exit is turned off, because tests time child processes against their deadlines.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
kinds=("$@")
((${#kinds[@]})) || kinds=(address thread)
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp"
export TSAN_OPTIONS="atexit_sleep_ms=0 second_deadlock_stack=1"
for kind in "${kinds[@]}"; do
  echo "== swift test --sanitize=$kind"
  swift build --build-tests --sanitize="$kind" --scratch-path ".build-$kind"
  swift test --skip-build --no-parallel --sanitize="$kind" --scratch-path ".build-$kind"
done
