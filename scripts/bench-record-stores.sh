#!/usr/bin/env bash
# LMDB against SQLite as the store of the cache's per-URL records (issue #41, item 2): builds the
# C benchmark below, runs every workload on tmpfs and on a disk file system, checks every answer,
# and prints one Markdown table on standard output (progress and details on standard error).
# What each row measures, and the figures of a run: Benchmarks/record-stores/README.md.
#
# Usage: scripts/bench-record-stores.sh          (about 30-60 s on a two-core machine)
# Environment:
#   BENCH_TMPFS_DIR  where the tmpfs stores go (default /dev/shm; must be tmpfs)
#   BENCH_DISK_DIR   where the disk stores go (default ${TMPDIR:-/tmp}; must not be tmpfs)
#   BENCH_ROUNDS     rounds of every timed row, the table shows their median (default 3)
#
# The C source is kept in this script (write_source, at the end) and compiled into a temporary
# directory: a .c file anywhere under Benchmarks/ would join the Swift target AttachKitBench, whose
# path is Benchmarks/, and SwiftPM refuses a target with mixed Swift and C sources (the whole
# package would fail to load). Needs cc, strace, liblmdb-dev and libsqlite3-dev (installed with
# apt-get when missing); uses hyperfine when installed, else a shell loop, for the fresh-process
# hit. Every store and binary is removed at the end.
set -euo pipefail
shopt -s inherit_errexit

rounds=${BENCH_ROUNDS:-3}
records=10000  # records in the store of the hit rows
lookups=200000 # timed lookups per in-process hit run (plus a tenth untimed, first)
once_runs=200  # fresh processes per hit-once round
once_index=4242
batch=400 procs=4
held=2000 steps=5000

say() { echo "bench-record-stores: $*" >&2; }

# run ARGS...: the benchmark program with ARGS, at most 120 s (timeout(1) signals its whole process
# group: a child stuck on a lock cannot hang the script); its failure ends the script.
run() {
  local status=0
  timeout 120 "$work/bench" "$@" || status=$?
  [ "$status" -ne 124 ] || fail "bench $*: timed out after 120 s"
  [ "$status" -eq 0 ] || fail "bench $*: failed with status $status"
}
fail() {
  say "$*"
  exit 1
}

main() {
  local tmpfs_parent=${BENCH_TMPFS_DIR:-/dev/shm} disk_parent=${BENCH_DISK_DIR:-${TMPDIR:-/tmp}}
  [ "$(stat -f -c %T "$tmpfs_parent")" = tmpfs ] || fail "$tmpfs_parent is not tmpfs: set BENCH_TMPFS_DIR"
  [ "$(stat -f -c %T "$disk_parent")" != tmpfs ] || fail "$disk_parent is tmpfs: set BENCH_DISK_DIR to a disk"
  disk_fs=$(findmnt -n -o FSTYPE -T "$disk_parent" 2>/dev/null || stat -f -c %T "$disk_parent")
  command -v cc >/dev/null || fail "needs a C compiler (cc)"
  command -v strace >/dev/null || fail "needs strace"
  need_header lmdb.h liblmdb-dev
  need_header sqlite3.h libsqlite3-dev

  work="" tmpfs_dir="" disk_dir=""
  trap cleanup EXIT
  trap 'exit 130' INT TERM
  work=$(mktemp -d "${TMPDIR:-/tmp}/bench-record-stores.XXXXXX")
  tmpfs_dir=$(mktemp -d "$tmpfs_parent/bench-record-stores.XXXXXX")
  disk_dir=$(mktemp -d "$disk_parent/bench-record-stores.XXXXXX")

  write_source "$work/bench.c"
  local flags=(-O2 -Wall -Wextra)
  cc "${flags[@]}" "$work/bench.c" -llmdb -lsqlite3 -o "$work/bench"
  # The fresh-process hit runs a program linked with its own library only (a process of the
  # cache never loads the other one).
  cc "${flags[@]}" -DWITH_SQLITE=0 "$work/bench.c" -llmdb -o "$work/bench-lmdb"
  cc "${flags[@]}" -DWITH_LMDB=0 "$work/bench.c" -lsqlite3 -o "$work/bench-sqlite"
  local versions
  versions=$(run versions)

  declare -gA R # R[metric,column] = the values of the rounds, space-separated
  cols="lmdb:tmpfs sqlite:tmpfs lmdb:disk sqlite:disk"
  local c k r out started=$SECONDS

  say "hit: $records records, $lookups random lookups in one process, $rounds rounds"
  for c in $cols; do
    out=$(run prepare "${c%%:*}" "$(store "$c" hit)" "$records")
    pick hit_store_bytes "$c" store_bytes "$out"
  done
  for r in $(seq "$rounds"); do
    for c in $cols; do
      out=$(run hit "${c%%:*}" "$(store "$c" hit)" "$records" "$lookups")
      pick hit_p50 "$c" hit_p50_us "$out"
      pick hit_p99 "$c" hit_p99_us "$out"
      pick record_bytes "$c" record_bytes_mean "$out"
      pick clock_ns "$c" clock_pair_ns "$out"
    done
  done

  say "hit-once: open + one lookup + close in a fresh process, $once_runs runs x $rounds rounds"
  for r in $(seq "$rounds"); do
    for c in $cols; do
      out=$(once_wall_ms "${c%%:*}" hit-once "${c%%:*}" "$(store "$c" hit)" "$once_index")
      add once_ms "$c" "$out"
      out=$(once_wall_ms "${c%%:*}" noop)
      add noop_ms "$c" "$out"
    done
  done
  for c in $cols; do
    k=${c%%:*}
    strace -f -c -o "$work/strace-c.txt" "$work/bench-$k" hit-once "$k" "$(store "$c" hit)" "$once_index"
    out=$(awk '$NF == "total" { print $4 }' "$work/strace-c.txt")
    [ -n "$out" ] || fail "no total in strace -c's summary"
    add once_calls "$c" "$out"
    BENCH_MARKERS=1 strace -f -o "$work/strace-$k-${c##*:}.txt" \
      "$work/bench-$k" hit-once "$k" "$(store "$c" hit)" "$once_index"
    out=$(phase_counts "$work/strace-$k-${c##*:}.txt")
    add once_phases "$c" "$out"
  done

  say "batch: $batch inserts in 1 process, $procs x $batch in $procs processes, a transaction each"
  for r in $(seq "$rounds"); do
    for c in $cols; do
      out=$(run batch "${c%%:*}" "$(store "$c" batch)" 1 "$batch")
      pick batch1_ms "$c" batch_wall_ms "$out"
      pick batch1_p50 "$c" batch_insert_p50_us "$out"
      out=$(run batch "${c%%:*}" "$(store "$c" batch)" "$procs" "$batch")
      pick batchN_ms "$c" batch_wall_ms "$out"
      pick batchN_p50 "$c" batch_insert_p50_us "$out"
    done
  done

  say "churn: $steps steps at $held records (insert one, delete the oldest, a transaction each)"
  for r in $(seq "$rounds"); do
    for c in $cols; do
      out=$(run churn "${c%%:*}" "$(store "$c" churn)" "$held" "$steps")
      pick churn_ms "$c" churn_wall_ms "$out"
      pick churn_bytes "$c" churn_store_bytes "$out"
      add churn_kib "$c" "$(kib "$(val churn_store_bytes <<<"$out")")"
    done
  done

  say "crash: a writer killed with SIGKILL before its commit"
  local crash_lines=""
  for c in $cols; do
    out=$(run crash-writer "${c%%:*}" "$(store "$c" crash)")
    [[ $out == "crash_${c%%:*} ok"* ]] || fail "crash check, $c: $out"
    crash_lines+="  ${c##*:}: $out"$'\n'
  done
  say "done in $((SECONDS - started)) s"

  # Details (standard error): the system calls of one fresh-process hit, between the markers.
  for c in $cols; do
    [ "${c##*:}" = disk ] || continue
    k=${c%%:*}
    {
      echo "-- system calls of a fresh-process hit, $k on $disk_fs (open, lookup, close):"
      phase_listing "$work/strace-$k-disk.txt"
    } >&2
  done
  printf '%s' "$crash_lines" >&2

  print_table "$versions" "$tmpfs_parent" "$disk_parent"
}

need_header() { # HEADER PACKAGE
  echo "#include <$1>" | cc -E -x c - >/dev/null 2>&1 && return
  say "installing $2"
  apt-get install -y "$2" >&2 || { apt-get update >&2 && apt-get install -y "$2" >&2; }
}

cleanup() {
  local d
  for d in "$work" "$tmpfs_dir" "$disk_dir"; do [ -z "$d" ] || rm -rf -- "$d"; done
}

# store KIND:FS WORKLOAD: the path of a store.
store() {
  local fs=${1##*:} dir
  if [ "$fs" = tmpfs ]; then dir=$tmpfs_dir; else dir=$disk_dir; fi
  echo "$dir/${1%%:*}-$2.db"
}

add() { R[$1,$2]+="${R[$1,$2]:+ }$3"; }

pick() { # METRIC COLUMN NAME OUTPUT: adds the value of NAME in OUTPUT
  local v
  v=$(val "$3" <<<"$4") || fail "no $3 in the benchmark's output: $4"
  add "$1" "$2" "$v"
}

# val NAME: the value of NAME in the benchmark's "name value" lines on standard input.
val() { awk -v k="$1" '$1 == k { print $2; found = 1 } END { if (!found) exit 1 }'; }

median() { printf '%s\n' $1 | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# once_wall_ms KIND ARGS...: the median wall time of $once_runs fresh processes of bench-KIND
# (the program linked with that store's library only) with ARGS, in ms.
once_wall_ms() {
  local k=$1
  shift
  if command -v hyperfine >/dev/null; then
    hyperfine -N --runs "$once_runs" --warmup 10 --style none --export-json "$work/hyperfine.json" \
      "$work/bench-$k $*" >/dev/null 2>"$work/hyperfine.err" ||
      fail "hyperfine: $(cat "$work/hyperfine.err")"
    grep -o '"median": *[0-9.eE+-]*' "$work/hyperfine.json" | head -1 |
      awk -F: '{ printf "%.4f\n", $2 * 1000 }'
  else
    local i t0 t1
    for i in $(seq "$once_runs"); do
      t0=$EPOCHREALTIME
      "$work/bench-$k" "$@"
      t1=$EPOCHREALTIME
      echo "$t0 $t1"
    done | awk '{ print ($2 - $1) * 1000 }' | sort -g | awk '{ v[NR] = $1 } END { printf "%.4f\n", v[int((NR + 1) / 2)] }'
  fi
}

# phase_counts TRACE: "open/lookup/close" system calls between the program's markers.
phase_counts() {
  awk '/bench-marker\/begin/ { p = 1; next } /bench-marker\/opened/ { p = 2; next }
       /bench-marker\/looked-up/ { p = 3; next } /bench-marker\/end/ { p = 0; next }
       p && !/^[0-9]* *(\+\+\+|---)/ { n[p]++ }
       END { printf "%d/%d/%d\n", n[1], n[2], n[3] }' "$1"
}

phase_listing() {
  awk '/bench-marker\/begin/ { p = 1; print "   [open]"; next }
       /bench-marker\/opened/ { p = 2; print "   [lookup]"; next }
       /bench-marker\/looked-up/ { p = 3; print "   [close]"; next }
       /bench-marker\/end/ { p = 0; next }
       p { sub(/^[0-9]+ +/, ""); print "   " substr($0, 1, 110) }' "$1"
}

kib() { awk -v b="$1" 'BEGIN { printf "%.0f", b / 1024 }'; }

fmt() { # VALUE DECIMALS
  awk -v v="$1" -v d="$2" 'BEGIN { printf "%.*f", d, v }'
}

ratio() { # SQLITE LMDB
  awk -v s="$1" -v l="$2" 'BEGIN { if (l <= 0) { printf "-"; exit } r = s / l; printf (r >= 10 ? "%.0f" : "%.1f"), r }'
}

# row LABEL METRIC DECIMALS: a table row of medians.
row() {
  local label=$1 metric=$2 d=$3 c m line
  declare -A v
  line="| $label |"
  for c in $cols; do
    m=$(median "${R[$metric,$c]}")
    v[$c]=$m
    line+=" $(fmt "$m" "$d") |"
  done
  line+=" $(ratio "${v[sqlite:tmpfs]}" "${v[lmdb:tmpfs]}") | $(ratio "${v[sqlite:disk]}" "${v[lmdb:disk]}") |"
  echo "$line"
}

phase_row() {
  local line="| … of them open / lookup / close |" c p
  declare -A t
  for c in $cols; do
    p=${R[once_phases,$c]}
    line+=" ${p//\// \/ } |"
    t[$c]=$((${p//\//+}))
  done
  line+=" $(ratio "${t[sqlite:tmpfs]}" "${t[lmdb:tmpfs]}") | $(ratio "${t[sqlite:disk]}" "${t[lmdb:disk]}") |"
  echo "$line"
}

print_table() { # VERSIONS TMPFS_DIR DISK_DIR
  local lmdb sqlite cpu
  lmdb=$(awk '$1 == "lmdb" { sub(/:$/, "", $3); print $3 }' <<<"$1")
  sqlite=$(awk '$1 == "sqlite" { print $2 }' <<<"$1")
  cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
  echo "Record stores, $(date -u '+%Y-%m-%d %H:%M UTC'): LMDB $lmdb, SQLite $sqlite; $(nproc) CPUs ($cpu), Linux $(uname -r);"
  echo "tmpfs = $2, $disk_fs = $3. Timed rows: median of $rounds rounds. Records of $(median "${R[record_bytes,lmdb:tmpfs]}") bytes (mean);"
  echo "store of the hit rows: $records records, LMDB $(kib "${R[hit_store_bytes,lmdb:tmpfs]}") KiB, SQLite $(kib "${R[hit_store_bytes,sqlite:tmpfs]}") KiB."
  echo "Each in-process hit sample includes a clock-read pair of $(median "${R[clock_ns,lmdb:tmpfs]}") ns."
  echo
  echo "| workload | LMDB tmpfs | SQLite tmpfs | LMDB $disk_fs | SQLite $disk_fs | SQLite/LMDB tmpfs | SQLite/LMDB $disk_fs |"
  echo "|---|--:|--:|--:|--:|--:|--:|"
  row "hit in process, p50 (µs)" hit_p50 2
  row "hit in process, p99 (µs)" hit_p99 2
  row "hit in a fresh process, wall p50 (ms)" once_ms 2
  row "… a fresh process of the same program that exits at once (ms)" noop_ms 2
  row "hit in a fresh process, system calls (strace -f -c)" once_calls 0
  phase_row
  row "batch $batch, 1 process (ms)" batch1_ms 1
  row "batch $batch, 1 process, per insert p50 (µs)" batch1_p50 1
  row "batch ${procs}×$batch, $procs processes (ms)" batchN_ms 1
  row "batch ${procs}×$batch, $procs processes, per insert p50 (µs)" batchN_p50 1
  row "churn $steps steps at $held records (ms)" churn_ms 1
  row "… store size after the churn, WAL included (KiB)" churn_kib 0
  echo
  echo "crash: LMDB ok / SQLite ok"
}

# write_source FILE: the benchmark's C source, Benchmarks/record-stores/bench.c (compiled by
# main into a temporary directory).
write_source() {
  cp "$(dirname "$0")/../Benchmarks/record-stores/bench.c" "$1"
}

main "$@"
