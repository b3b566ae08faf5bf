#!/usr/bin/env bash
# Mutation fuzzing of the rescue, as a user runs it: each case is a sample from Samples/media
# (the images and media the rescue reads) mutated by zzuf, given to `attachkit rescue --json
# --deadline D` as a new process. A case fails when:
#   - attachkit dies by a signal or exits with anything but 0 (delivered), 1 (refused) or 4 (failed);
#   - its answer comes later than the deadline + 0.5 s (the command's own time, from its JSON);
#   - it says a file was delivered, and `attachkit validate` refuses that file;
#   - an output is left behind by a refusal;
#   - a rescue worker was killed by its seccomp filter (a call a library makes that the allow-list
#     lacks: a rescue lost, not an attack, on these inputs).
# Usage: scripts/fuzz-rescue.sh [CASES] [FIRST-SEED] [DEADLINE-SECONDS]   (defaults: 40 1 5)
# Needs zzuf (apt-get install zzuf) and a built attachkit (swift build; ATTACHKIT=path to use
# another). Prints one line per failure and the counts; exits 1 if any case failed.
set -euo pipefail
cd "$(dirname "$0")/.."
cases=${1:-40}
seed=${2:-1}
deadline=${3:-5}
command -v zzuf >/dev/null || { echo "fuzz-rescue: zzuf is not installed (apt-get install zzuf)" >&2; exit 2; }
attachkit=${ATTACHKIT:-$(swift build --show-bin-path)/attachkit}
[ -x "$attachkit" ] || { echo "fuzz-rescue: no attachkit at $attachkit (swift build first)" >&2; exit 2; }

# every sample but the folder's notes: each format the rescue reads (and those it refuses)
mapfile -t samples < <(find Samples/media -maxdepth 1 -type f ! -name '*.md' ! -name '*.tsv' ! -name '*.txt' | sort)
((${#samples[@]})) || { echo "fuzz-rescue: no samples found" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/attachkit-fuzz-rescue.XXXXXX")
trap 'rm -rf "$work"' EXIT
limit_ms=$(awk -v d="$deadline" 'BEGIN { print d * 1000 + 500 }')
delivered=0 refused=0 failures=0 filtered=0
for ((i = 0; i < cases; i++)); do
  case_seed=$((seed + i))
  sample=${samples[$((case_seed % ${#samples[@]}))]}
  input="$work/case-$case_seed.${sample##*.}"
  output="$work/out-$case_seed"
  # about 1 byte in 250 changed: enough to break structures, not so much that nothing parses
  zzuf -s "$case_seed" -r 0.004 <"$sample" >"$input"
  status=0
  json=$("$attachkit" rescue --json --deadline "$deadline" "$input" -o "$output" 2>"$work/stderr") || status=$?
  took=$(printf '%s' "$json" | sed -n 's/.*"totalMs":\([0-9.]*\).*/\1/p' | head -n 1)
  problem=""
  # 1: refused; 4: failed (out of time, an I/O error): both answers, checked below
  if [[ $json == *"system call its sandbox refuses"* ]]; then
    filtered=$((filtered + 1))
    problem="a rescue worker was killed by its seccomp filter: $(printf '%s' "$json" | head -c 400)"
  elif ((status > 1 && status != 4)); then
    problem="exit status $status ($( ((status > 128)) && echo "signal $((status - 128))" || echo "not 0, 1 or 4"))"
  elif [ -z "$took" ]; then
    problem="no answer with a time: $json"
  elif awk -v t="$took" -v l="$limit_ms" 'BEGIN { exit !(t > l) }'; then
    problem="answered after $took ms (deadline $deadline s)"
  elif ((status == 0)); then
    delivered=$((delivered + 1))
    # the rescued file, or the input itself when it was acceptable as it was
    file=$input
    [ -e "$output" ] && file=$output
    if ! "$attachkit" validate --quiet "$file" >/dev/null 2>&1; then
      problem="delivered a file the validator refuses"
    fi
  else
    refused=$((refused + 1))
    [ ! -e "$output" ] || problem="refused, but left its output behind"
  fi
  if [ -n "$problem" ]; then
    failures=$((failures + 1))
    cp "$input" "fuzz-rescue-failure-$case_seed.${sample##*.}" 2>/dev/null || true
    echo "FAIL seed $case_seed (${sample##*/}): $problem"
  fi
  rm -f "$input" "$output"
done
echo "fuzz-rescue: $cases cases from seed $seed: $delivered delivered, $refused refused, $failures failed ($filtered workers killed by the filter)"
((failures == 0))
