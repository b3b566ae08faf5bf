#!/usr/bin/env bash
# Runs the test suite under AddressSanitizer and ThreadSanitizer, each in its own build folder.
# Usage: scripts/sanitize.sh [--filter REGEX] [address] [thread]   (default: both, every test)
# LeakSanitizer reports from the toolchain's own XCTest and Foundation.Process internals are
# suppressed by their exact frames (scripts/lsan.supp), never by a whole library.
# ThreadSanitizer runs without suppressions; its default one-second sleep at process exit is
# turned off, because tests time child processes against their deadlines.
# ThreadSanitizer writes its reports to files (log_path), one per process, so that a race in a
# child the tests start (attachkit serve, the CLI), whose stderr a test keeps or drops, still
# fails the run: any report file left at the end is printed and fails it.
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
reports=$(mktemp -d "${TMPDIR:-/tmp}/attachkit-sanitize.XXXXXX")
trap 'rm -rf "$reports"' EXIT
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp"
export TSAN_OPTIONS="atexit_sleep_ms=0 second_deadlock_stack=1 log_path=$reports/tsan"
for kind in "${kinds[@]}"; do
  echo "== swift test --sanitize=$kind ${filter[*]}"
  swift build --build-tests --sanitize="$kind" --scratch-path ".build-$kind"
  status=0
  swift test --skip-build --no-parallel --sanitize="$kind" --scratch-path ".build-$kind" "${filter[@]}" || status=$?
  if [ "$kind" = thread ] && compgen -G "$reports/tsan.*" >/dev/null; then
    for report in "$reports"/tsan.*; do
      echo "== ThreadSanitizer report of process ${report##*.}"
      cat "$report"
    done
    warnings=$(cat "$reports"/tsan.* | grep -c '^WARNING: ThreadSanitizer' || true)
    echo "ThreadSanitizer: $warnings report(s) from $(compgen -G "$reports/tsan.*" | wc -l) process(es)" >&2
    status=1
  fi
  [ "$status" -eq 0 ] || exit "$status"
done
