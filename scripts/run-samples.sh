#!/usr/bin/env bash
# The README's main job, on the bundled samples and loopback only:
#   1. serve Samples/media from a loopback server this script starts (and always stops);
#   2. prefetch every acceptable sample cold into a fresh cache, then again (all cache hits);
#   3. validate the near-misses: each must be refused with the code manifest.tsv's expect column
#      gives it (a near-miss refused with another code, or accepted, fails the job, naming it);
#   4. print cold vs hit latency per file against the 30 s budget, and each refusal's reason;
#   5. fetch the near-misses again with rescue on: which become attachments, with their actions and
#      times, and why the rest stay refused (every delivered file is one the validator accepts).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
echo "building (release, Swift runtime linked statically)…" >&2
# The static runtime saves the dynamic loader ~1.3 ms per process: what a script that runs
# attachkit once per notification pays on every cache hit.
release=(-c release --static-swift-stdlib)
swift build "${release[@]}" --product attachkit >/dev/null
swift build "${release[@]}" --product sample-server >/dev/null
bin=$(swift build "${release[@]}" --show-bin-path)

work=$(mktemp -d)
server=""
cleanup() {
  local status=$?
  set +e # stopping the server (it exits on SIGTERM with 143) never changes the job's outcome
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null
    wait "$server" 2>/dev/null
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$bin/sample-server" Samples/media >"$work/base" &
server=$!
for _ in $(seq 200); do [ -s "$work/base" ] && break; sleep 0.05; done
base=$(head -1 "$work/base")
[ -n "$base" ] || { echo "the sample server did not start" >&2; exit 1; }

# manifest.tsv (written by scripts/make-samples.sh) gives each sample's expected outcome: accepted,
# or the error code of a near-miss.
accepted=() refused=()
declare -A expected_code=()
while IFS=$'\t' read -r file expect _; do
  [ "$file" = "file" ] && continue
  if [ "$expect" = "accepted" ]; then
    accepted+=("$file")
  else
    refused+=("$file")
    expected_code[$file]=$expect
  fi
done <Samples/media/manifest.tsv
printf '%s\n' "${accepted[@]/#/$base/media/}" >"$work/urls.txt"

cache="$work/cache"
export ATTACHKIT_ALLOW_PRIVATE_NETWORKS=1  # the sample server is on loopback
echo
# Both passes must accept every sample (prefetch exits 0 only then); the table is printed before
# failing, so a regression shows which sample it is.
echo "== 1. cold: ${#accepted[@]} samples into a fresh cache"
cold_status=0
"$bin/attachkit" prefetch --cache-dir "$cache" --json "$work/urls.txt" >"$work/cold.jsonl" || cold_status=$?
echo "== 2. hot: the same list again"
hot_status=0
"$bin/attachkit" prefetch --cache-dir "$cache" --json "$work/urls.txt" >"$work/hot.jsonl" || hot_status=$?

field() { sed -n "s/.*\"$1\":\\(\"[^\"]*\"\\|[0-9.]*\\).*/\\1/p" | tr -d '"'; }
echo
printf '%-34s %-5s %-15s %10s %10s %8s %9s\n' FILE TYPE "HOT OUTCOME" COLD HIT SPEEDUP "COLD/30s"
paste -d '\n' "$work/cold.jsonl" "$work/hot.jsonl" | while read -r cold && read -r hot; do
  name=$(echo "$cold" | field input); name=${name##*/}
  type=$(echo "$cold" | field type)
  outcome=$(echo "$hot" | field outcome)
  source=$(echo "$hot" | field source)
  cold_ms=$(echo "$cold" | field totalMs)
  hot_ms=$(echo "$hot" | field totalMs)
  awk -v n="$name" -v t="${type:--}" -v o="$outcome/$source" -v c="$cold_ms" -v h="$hot_ms" 'BEGIN {
    printf "%-34s %-5s %-15s %7.2f ms %7.3f ms %7.0fx %8.4f%%\n", n, t, o, c, h, (h > 0 ? c / h : 0), c / 300
  }'
done

echo
echo "== 3. near-misses: each refused with its reason"
# Every near-miss must be refused: validate exits 1 when any input is refused, and --quiet prints
# one line per refusal ("FILE: CODE: reason").
status=0
"$bin/attachkit" validate --quiet "${refused[@]/#/Samples/media/}" 2>"$work/refusals.txt" || status=$?
[ "$status" -eq 1 ] || { echo "validate exited $status on the near-misses (expected 1)" >&2; exit 1; }
sed 's#^Samples/media/##' "$work/refusals.txt" \
  | awk -F': ' '{ printf "%-34s %-17s %s\n", $1, $2, substr($0, length($1) + length($2) + 5) }'
# Each refusal's code against the manifest's; a near-miss with no refusal line was accepted.
wrong=()
declare -A refused_with=()
while IFS= read -r line; do
  name=${line%%: *}
  name=${name#Samples/media/}
  rest=${line#*: }
  refused_with[$name]=${rest%%: *}
done <"$work/refusals.txt"
for file in "${refused[@]}"; do
  actual=${refused_with[$file]:-"(not refused)"}
  [ "$actual" = "${expected_code[$file]}" ] || wrong+=("$file: expected ${expected_code[$file]}, got $actual")
done
if ((${#wrong[@]})); then
  echo "${#wrong[@]} near-miss(es) not refused with the code Samples/media/manifest.tsv expects:" >&2
  printf '  %s\n' "${wrong[@]}" >&2
  exit 1
fi
[ "$(wc -l <"$work/refusals.txt")" -eq "${#refused[@]}" ] \
  || { echo "validate printed $(wc -l <"$work/refusals.txt") refusal lines for ${#refused[@]} near-misses" >&2; exit 1; }
echo "every near-miss was refused with its manifest code"

echo
echo "== 4. near-misses again, with rescue on (libvips and FFmpeg in worker processes)"
printf '%s\n' "${refused[@]/#/$base/media/}" >"$work/near-misses.txt"
# prefetch exits 1 when any input stays refused, as some near-misses must, and 4 when one failed
# (a rescue out of time on a loaded machine: its row says so); anything else (a usage error, an
# unusable cache, a signal) fails the job.
rescue_status=0
"$bin/attachkit" prefetch --rescue --cache-dir "$work/rescue-cache" --json "$work/near-misses.txt" \
  >"$work/rescue.jsonl" 2>"$work/rescue.log" || rescue_status=$?
{ [ "$rescue_status" -le 1 ] || [ "$rescue_status" -eq 4 ]; } \
  || { echo "prefetch --rescue exited $rescue_status:" >&2; tail -5 "$work/rescue.log" >&2; exit 1; }
[ "$(wc -l <"$work/rescue.jsonl")" -eq "${#refused[@]}" ] \
  || { echo "prefetch --rescue answered $(wc -l <"$work/rescue.jsonl") of ${#refused[@]} near-misses" >&2; exit 1; }
actions() { sed -n 's/.*"actions":\[\([^]]*\)\].*/\1/p' | tr -d '"'; }
printf '%-34s %-9s %-5s %-26s %10s  %s\n' FILE OUTCOME TYPE ACTIONS TIME "FROM / WHY NOT"
rescued=0
while read -r line; do
  name=$(echo "$line" | field input); name=${name##*/}
  outcome=$(echo "$line" | field outcome)
  ms=$(echo "$line" | field totalMs)
  if [ "$outcome" = accepted ]; then
    rescued=$((rescued + 1))
    printf '%-34s %-9s %-5s %-26s %7.1f ms  %s\n' "$name" rescued "$(echo "$line" | field type)" \
      "$(echo "$line" | actions)" "$ms" "$(echo "$line" | field from | sed 's/; codecs=.*//')"
  else
    printf '%-34s %-9s %-5s %-26s %7.1f ms  %.70s\n' "$name" refused - "$(echo "$line" | field code)" "$ms" \
      "$(echo "$line" | sed -n 's/.*"message":"\([^"\\]*\).*/\1/p')"
  fi
done <"$work/rescue.jsonl"
echo "rescue: ${rescued}/${#refused[@]} near-misses became attachments"

echo
count() { awk -v pattern="$1" 'index($0, pattern) {n++} END {print n+0}' "$2"; }
cold_accepted=$(count '"outcome":"accepted"' "$work/cold.jsonl")
hits=$(count '"source":"cache"' "$work/hot.jsonl")
echo "summary: ${cold_accepted}/${#accepted[@]} samples accepted cold, ${hits}/${#accepted[@]} answered from the cache on the second pass, ${#refused[@]} near-misses refused; budget 30 s per notification."
if [ "$cold_status" -ne 0 ] || [ "$cold_accepted" -ne "${#accepted[@]}" ]; then
  echo "the cold pass did not accept every sample (prefetch exited $cold_status)" >&2
  exit 1
fi
if [ "$hot_status" -ne 0 ] || [ "$hits" -ne "${#accepted[@]}" ]; then
  echo "the second pass did not answer every sample from the cache (prefetch exited $hot_status)" >&2
  exit 1
fi
