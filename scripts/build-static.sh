#!/usr/bin/env bash
# The deployable binaries: every product of the package built for release with the Swift runtime
# linked statically (`--static-swift-stdlib`), in a scratch path of their own (.build/static, or
# $1), so that neither this build nor the development build (.build/debug) makes the other start
# over. Builds the whole package as a plain `swift build` does, so a target that breaks the root
# build (a test-only module imported where the static runtime has none) fails it; then checks
# that the programs link no Swift shared library and run. Prints the directory of the binaries.
# About 15 min from nothing on two cores; minutes when little changed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scratch=${1:-.build/static}
build=(swift build -c release --static-swift-stdlib --scratch-path "$scratch")
echo "build-static: building every product (release, Swift runtime linked statically) in $scratch" >&2
"${build[@]}"
bin=$("${build[@]}" --show-bin-path)
for program in attachkit attachkit-rescue-worker extension-runner sample-server attachkit-bench; do
  [ -x "$bin/$program" ] || { echo "build-static: $bin/$program was not built" >&2; exit 1; }
  if ldd "$bin/$program" | grep -E 'libswift|libFoundation|libdispatch' >&2; then
    echo "build-static: $program links the Swift runtime dynamically (the libraries above)" >&2
    exit 1
  fi
done
"$bin/attachkit" --version >/dev/null
echo "$bin"
