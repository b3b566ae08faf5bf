#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs every test, in parallel
# (Swift Testing's default, as plain `swift test` does; see docs/development.md's Tests section).
# `scripts/test.sh --no-parallel` runs them one at a time instead; any arguments are passed to
# `swift test`. Then the README's consumer package is built and run, alone (ConsumerPackageTests).
# Besides the packages every build needs, it installs what the environment-dependent tests use, so
# that they run instead of skipping: nginx and varnish (the tiers of the serve deployment tests),
# goaccess (reads serve's access log), systemd (systemd-analyze checks the unit file) and, in
# scripts/install-deps.sh, python3-prometheus-client (the metrics test), zsh and fish (the
# completion tests) and util-linux (mount, for the disk-full test's tmpfs). Two tests need root
# (a tmpfs mount, a directory given to another user); run as another user they are skipped.
# A skipped test prints "SKIPPED: <test>: <why>", and every such line is listed again at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh nginx varnish goaccess systemd
[ "$(id -u)" -eq 0 ] ||
  echo "test.sh: not root: the disk-full (tmpfs) and foreign-owner tests will be SKIPPED" >&2
swift build --build-tests -Xswiftc -warnings-as-errors
log=$(mktemp "${TMPDIR:-/tmp}/attachkit-test.XXXXXX.log")
trap 'rm -f "$log"' EXIT
status=0
# Only the serial pass runs the suites that start a SeaweedFS (their Go store beside every
# other suite starved two cores: Tests/TestTraits/ObjectStoreTrait.swift); a parallel run skips them.
pass=parallel
for argument in "$@"; do [ "$argument" != --no-parallel ] || pass=serial; done
ATTACHKIT_TEST_PASS=$pass swift test --skip-build "$@" 2>&1 | tee "$log" || status=$?
# The README's library section built as a package of its own (ConsumerPackageTests): alone,
# after the suite, since it compiles the library and would slow the other tests past their bounds.
echo "== the README's consumer package (ConsumerPackageTests, alone)"
ATTACHKIT_CONSUMER_TEST=1 swift test --skip-build --filter ConsumerPackageTests 2>&1 | tee -a "$log" || status=$?
skipped=$(grep -c '^SKIPPED: ' "$log" || true)
if [ "$skipped" -gt 0 ]; then
  echo "== $skipped test(s) or part(s) of tests SKIPPED on this machine:"
  grep '^SKIPPED: ' "$log"
fi
exit "$status"
