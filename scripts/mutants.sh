#!/usr/bin/env bash
# The mutation audit, kept (issue 56): each mutant is a one-line bug in the product, kept as a
# patch (scripts/mutants/ID.patch) with the `swift test --filter` expression whose tests must
# notice it (scripts/mutants/list.tsv). For each mutant asked for, this script applies its patch
# to the work tree, builds (`swift build --build-tests -Xswiftc -warnings-as-errors`), runs its
# filter with `swift test --skip-build`, and reverts the patch (a trap reverts it on any exit,
# Ctrl-C included). A mutant is CAUGHT when its tests fail, SURVIVED when they pass.
#
# Usage: scripts/mutants.sh            every mutant of the list
#        scripts/mutants.sh M03 M05    the named ones
#        scripts/mutants.sh --list     the list, without running anything
# Exit: 0 when every mutant run was caught; 1 when any survived; 2 when none survived but one
# could not be judged (its patch no longer applies, the mutated tree does not build, or its
# filter ran no test): the patch or the filter needs updating.
#
# First the unmutated tree is built and the chosen filters run on it: they must pass there, or a
# mutant's failing tests would prove nothing (exit 2). The files a patch touches must have no
# uncommitted change (the script refuses otherwise). A build per mutant: a few minutes each on a
# small machine. At the end the unmutated tree is built again, so a later
# `swift test --skip-build` runs the real code. Each mutant's build and test output is kept in
# $TMPDIR (the path is printed).
set -uo pipefail
cd "$(dirname "$0")/.."
# One filter at a time, as the serial pass runs: the SeaweedFS suites (S01–S06) run here too.
export ATTACHKIT_TEST_PASS=serial
list=scripts/mutants/list.tsv

if [ "${1:-}" = "--list" ]; then
  grep -v '^#' "$list" | awk -F'\t' '{ printf "%s  %s\n      filter: %s\n", $1, $3, $2 }'
  exit 0
fi

declare -A filters
ids=()
while IFS=$'\t' read -r id filter _; do
  [ -z "$id" ] || [ "${id:0:1}" = "#" ] && continue
  filters[$id]=$filter
  ids+=("$id")
done <"$list"
if (($#)); then
  for id in "$@"; do
    [ -n "${filters[$id]:-}" ] || { echo "mutants: no mutant $id in $list" >&2; exit 2; }
  done
  ids=("$@")
fi

applied=""
revert() {
  [ -n "$applied" ] || return 0
  if ! git apply -R "$applied"; then
    echo "mutants: could not revert $applied: revert it by hand (git apply -R $applied)" >&2
    applied=""
    exit 2
  fi
  applied=""
}
trap revert EXIT
trap 'revert; exit 130' INT TERM

build() { swift build --build-tests -Xswiftc -warnings-as-errors >>"$1" 2>&1; }

# The baseline: the chosen filters pass on the unmutated tree.
union=$(for id in "${ids[@]}"; do echo "${filters[$id]}"; done | paste -sd '|')
baseline=$(mktemp "${TMPDIR:-/tmp}/attachkit-mutant-baseline.XXXXXX.log")
echo "baseline: building the unmutated tree and running the chosen filters on it (log: $baseline)"
if ! build "$baseline" || ! timeout 1800 swift test --skip-build --filter "$union" >>"$baseline" 2>&1; then
  echo "mutants: the chosen tests do not build or pass on the unmutated tree: nothing can be judged" >&2
  exit 2
fi

caught=() survived=() stale=()
for id in "${ids[@]}"; do
  patch=scripts/mutants/$id.patch
  log=$(mktemp "${TMPDIR:-/tmp}/attachkit-mutant-$id.XXXXXX.log")
  touched=$(git apply --numstat "$patch" 2>/dev/null | cut -f3)
  if [ -z "$touched" ] || ! git diff --quiet HEAD -- $touched; then
    echo "$id: REFUSED: $patch touches files with uncommitted changes (or is empty)"
    stale+=("$id")
    continue
  fi
  if ! git apply "$patch" 2>>"$log"; then
    echo "$id: STALE: $patch no longer applies (log: $log)"
    stale+=("$id")
    continue
  fi
  applied=$patch
  echo "$id: applied $patch ($touched); building"
  if ! build "$log"; then
    echo "$id: STALE: the mutated tree does not build (log: $log)"
    stale+=("$id")
    revert
    continue
  fi
  status=0
  timeout 1800 swift test --skip-build --filter "${filters[$id]}" >>"$log" 2>&1 || status=$?
  revert
  if grep -q 'Test run with 0 tests' "$log" || ! grep -qE 'Test run with [0-9]+ test|Executed [1-9]' "$log"; then
    echo "$id: STALE: the filter '${filters[$id]}' ran no test (log: $log)"
    stale+=("$id")
  elif [ "$status" -ne 0 ]; then
    [ "$status" -eq 124 ] && why="timed out" || why="$(grep -cE '✘ Test .* recorded an issue' "$log") issue(s)"
    echo "$id: CAUGHT by ${filters[$id]} ($why; log: $log)"
    # the first issues, as FILE:LINE: what failed (the test's own message, when it has one, below)
    awk 'after && /^↳ / { sub(/^↳ /, "      "); print } { after = 0 }
      /^✘ Test .* recorded an issue at / { if (++n > 3) exit; sub(/^✘ Test .* recorded an issue at /, "    "); print; after = 1 }' \
      "$log" | cut -c1-240
    caught+=("$id")
  else
    echo "$id: SURVIVED: ${filters[$id]} passed with the mutant in place (log: $log)"
    survived+=("$id")
  fi
done

echo "rebuilding the unmutated tree"
build "$(mktemp "${TMPDIR:-/tmp}/attachkit-mutant-clean.XXXXXX.log")" || echo "mutants: the unmutated tree does not build" >&2
echo "mutants: ${#caught[@]} caught (${caught[*]:-none}), ${#survived[@]} survived (${survived[*]:-none}), ${#stale[@]} not judged (${stale[*]:-none})"
((${#survived[@]})) && exit 1
((${#stale[@]})) && exit 2
exit 0
