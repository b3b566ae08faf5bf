#!/usr/bin/env bash
# Builds the libFuzzer targets (swiftc -sanitize=fuzzer,address) and runs each for a bounded
# time. Usage: scripts/fuzz.sh [SECONDS per target, default 60] [media|container|parser ...]
# Seeds: Samples/media for the media target; its TIFF, MP4, MOV and M4A files for the container
# target (the TIFF and ISO BMFF walks, whose work pointers in a file could amplify); a few
# command lines for the parser. An input that
# takes over 2 s (-timeout) or over 1 GiB (-rss_limit_mb) is a finding like a crash, so work
# amplification is caught, not only memory errors. Findings (crash-*, leak-*, timeout-*, oom-*)
# land in fuzz-out/TARGET/findings/ and each becomes a regression test. Exits 1 when any fuzzer
# found something or exited abnormally.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
seconds=${1:-60}
if [ $# -gt 0 ]; then shift; fi
targets=("$@")
((${#targets[@]})) || targets=(media container parser)
out=fuzz-out
mkdir -p "$out"

# The AttachmentKit sources with one libFuzzer entry file, as fuzz-NAME.
build_library_target() {
  local name=$1 entry=$2
  mapfile -t sources < <(find Sources/AttachmentKit -name '*.swift' | sort)
  mkdir -p "$out/modules"
  swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name PosixLock -emit-module \
    -emit-module-path "$out/modules/PosixLock.swiftmodule" -c Sources/PosixLock/*.swift -o "$out/modules/PosixLock.o"
  # CWorkerIO, a C target: an object for each of its files, and the module map SwiftPM would
  # make for its header.
  mkdir -p "$out/modules/CWorkerIO"
  local cworker=() source object
  for source in Sources/CWorkerIO/*.c; do
    object="$out/modules/CWorkerIO-$(basename "$source" .c).o"
    cc -O2 -c -I Sources/CWorkerIO/include "$source" -o "$object"
    cworker+=("$object")
  done
  printf 'module CWorkerIO {\n  header "%s"\n  export *\n}\n' "$PWD/Sources/CWorkerIO/include/CWorkerIO.h" \
    >"$out/modules/CWorkerIO/module.modulemap"
  # -package-name: the library declares package-access members (as SwiftPM builds it).
  swiftc -sanitize=fuzzer,address -parse-as-library -O -g -module-name AttachmentKit -package-name attachmentkit \
    -I "$out/modules" -I "$out/modules/CWorkerIO" -I Sources/CAV -I Sources/CCurl -I Sources/CMagic \
    -I Sources/CVips -I Sources/CLMDB -I Sources/CZlib -ldl -llmdb "${sources[@]}" "$entry" "$out/modules/PosixLock.o" "${cworker[@]}" \
    -o "$out/fuzz-$name"
}

build_media() { build_library_target media Tests/Fuzz/MediaFuzzer.swift; }
build_container() { build_library_target container Tests/Fuzz/ContainerFuzzer.swift; }

build_parser() {
  mapfile -t sources < <(find Sources/ArgumentParsing -name '*.swift' | sort)
  swiftc -sanitize=fuzzer,address -parse-as-library -O -g -module-name ArgumentParsing \
    "${sources[@]}" Tests/Fuzz/ParserFuzzer.swift -o "$out/fuzz-parser"
}

for target in "${targets[@]}"; do
  echo "== building fuzz-$target"
  "build_$target"
  corpus="$out/$target/corpus"
  mkdir -p "$corpus" "$out/$target/findings"
  if [ "$target" = media ]; then
    find Samples/media -maxdepth 1 -type f ! -name '*.md' ! -name '*.tsv' -exec cp -n -t "$corpus/" {} +
  elif [ "$target" = container ]; then
    find Samples/media -maxdepth 1 -type f \( -name '*.tiff' -o -name '*.mp4' -o -name '*.mov' -o -name '*.m4a' \) \
      -exec cp -n -t "$corpus/" {} +
  else
    printf 'fetch\0--json\0http://x/a.jpg' >"$corpus/fetch"
    printf 'prefetch\0-j\08\0-' >"$corpus/prefetch"
    printf 'cache\0gc\0--max-bytes=10MiB' >"$corpus/gc"
    printf 'help\0cache\0stats' >"$corpus/help"
  fi
  echo "== fuzzing $target for ${seconds}s"
  fuzz_status=0
  "$out/fuzz-$target" "$corpus" -max_total_time="$seconds" -max_len=131072 -timeout=2 -rss_limit_mb=1024 \
    -artifact_prefix="$out/$target/findings/" -print_final_stats=1 >"$out/$target/last-run.txt" 2>&1 \
    || fuzz_status=$?
  grep -E '^Done|stat::number_of_executed_units|stat::average_exec_per_sec' "$out/$target/last-run.txt" \
    || echo "no final statistics: the fuzzer stopped early"
  "$out/fuzz-$target" "$corpus" -runs=0 >"$out/$target/coverage.txt" 2>&1 || fuzz_status=$?
  { grep -E 'DONE|INITED' "$out/$target/coverage.txt" || echo "unknown"; } | tail -1 | sed "s/^/coverage of the corpus: /"
  findings=$(find "$out/$target/findings" -type f | wc -l)
  echo "findings: $findings (in $out/$target/findings); fuzzer exit status $fuzz_status"
  if [ "$findings" -ne 0 ] || [ "$fuzz_status" -ne 0 ]; then
    tail -20 "$out/$target/last-run.txt" >&2
    status=1
  fi
done
exit "${status:-0}"
