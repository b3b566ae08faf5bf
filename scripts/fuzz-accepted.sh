#!/usr/bin/env bash
# Accepted means a decoder can open it (issue 52, item 3): mutates every sample manifest.tsv
# expects accepted with zzuf over a fixed seed range, validates every mutation with
# `attachkit validate --json`, and opens each accepted one in the reference decoder: FFmpeg for
# audio and video (`ffmpeg -v error -i F -t 1 -f null -`, exit status 0), libvips for images
# (`vips copy F x.v`). Prints the counts; exits 1 when an accepted mutation does not open and is
# not one of the known cases of scripts/fuzz-accepted.known (each is kept in fuzz-out/accepted/
# with the decoder's last words), 2 on a setup failure.
#
# Usage: scripts/fuzz-accepted.sh [FIRST_SEED [LAST_SEED]]   (default seeds 1 to 6: 318 cases,
# about 60 s with a built attachkit on a busy two-core machine, each accepted audio or video
# mutation decoded in a rescue worker; 1 to 38: 2,014 cases, about 8 minutes)
#
# CI runs seeds 1-6. The goal is 0 accepted-but-unopenable, and it is met: seeds 1-38 (2,014
# cases) left 21 once the probes were done (CAF ALAC packet data 10, AAC 4, AV1 2, a JPEG DQT cut
# short, an MP3 whose cover art has no size, a MOV and an HEVC track FFmpeg's demuxer drops, a
# fragmented H.264), and leave 0 since validate decodes the first second of an accepted audio or
# video file in a rescue worker (the decode check, Rescue/DecodeCheck.swift) and the JPEG probe
# reads DQT tables as libjpeg-turbo does. scripts/fuzz-accepted.known lists the cases still let
# through, none today, so any new class of accepted-but-unopenable file fails CI. The decode
# check also refuses files `ffmpeg` exits 0 on though nothing of them decodes ("Output file is
# empty, nothing was encoded": a track with no readable packet), which this script's test,
# the exit status, does not see.
# Environment: FUZZ_KNOWN (the known list, default scripts/fuzz-accepted.known), FUZZ_RATIO (zzuf's bit-flip ratio, default 0.001), ATTACHKIT (a built attachkit to
# use instead of building the debug one), FUZZ_OUT (default fuzz-out/accepted).
set -euo pipefail
cd "$(dirname "$0")/.."
first=${1:-1}
last=${2:-6}
ratio=${FUZZ_RATIO:-0.001}
out=${FUZZ_OUT:-fuzz-out/accepted}
for tool in zzuf ffmpeg vips jq; do
  command -v "$tool" >/dev/null || { echo "fuzz-accepted: $tool is not installed" >&2; exit 2; }
done
attachkit=${ATTACHKIT:-}
if [ -z "$attachkit" ]; then
  # The test steps' flags (scripts/test.sh): after them nothing is compiled again.
  swift build --build-tests -Xswiftc -warnings-as-errors >/dev/null
  attachkit="$(swift build --build-tests -Xswiftc -warnings-as-errors --show-bin-path)/attachkit"
fi
[ -x "$attachkit" ] || { echo "fuzz-accepted: no attachkit at $attachkit" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/cases"
rm -rf "$out"
mkdir -p "$out"

# Opens `$1` (of category `$2`) in the reference decoder; its messages go to $work/decoder.err.
opens() {
  local status=0
  if [ "$2" = "image" ]; then
    timeout 60 vips copy "$1" "$work/copy.v" >"$work/decoder.err" 2>&1 || status=$?
    rm -f "$work/copy.v"
  else
    timeout 60 ffmpeg -nostdin -hide_banner -v error -i "$1" -t 1 -f null - >"$work/decoder.err" 2>&1 || status=$?
  fi
  return "$status"
}

# The mutations: SAMPLE.sSEED.EXT (the validator never reads the name; the decoders may). A
# sample the decoder cannot open as it is says nothing of its mutations: it is skipped, and named
# (none is today: jpeg-short-app0.jpg, which libjpeg cannot open, is refused since issue 52).
while IFS=$'\t' read -r file expect type _; do
  [ "$expect" = "accepted" ] || continue
  case $type in jpeg | png | gif | tiff) category=image ;; *) category=media ;; esac
  if ! opens "Samples/media/$file" "$category"; then
    echo "skipped: $file does not open in the reference decoder itself: $(tail -1 "$work/decoder.err")"
    continue
  fi
  for seed in $(seq "$first" "$last"); do
    zzuf -s "$seed" -r "$ratio" <"Samples/media/$file" >"$work/cases/${file%.*}.s$seed.${file##*.}"
  done
done <Samples/media/manifest.tsv
cases=("$work"/cases/*)

# One process validates them all (it exits 1 when any is refused: that is expected here).
"$attachkit" validate --json "${cases[@]}" >"$work/results.jsonl" 2>"$work/validate.err" || true
results=$(wc -l <"$work/results.jsonl")
[ "$results" -eq "${#cases[@]}" ] || {
  echo "fuzz-accepted: attachkit answered $results of ${#cases[@]} inputs" >&2
  tail -5 "$work/validate.err" >&2
  exit 2
}

# The known cases (scripts/fuzz-accepted.known): reported, but only an unknown one fails.
declare -A known=()
while IFS=$'\t' read -r name _; do
  [ -n "$name" ] && [ "${name:0:1}" != "#" ] && known[$name]=1
done < <(cat "${FUZZ_KNOWN:-scripts/fuzz-accepted.known}" 2>/dev/null || true)

accepted=0 unopenable=0 unknown=0
while IFS=$'\t' read -r path category; do
  accepted=$((accepted + 1))
  if ! opens "$path" "$category"; then
    unopenable=$((unopenable + 1))
    name=$(basename "$path")
    cp "$path" "$out/$name"
    tail -3 "$work/decoder.err" >"$out/$name.decoder.txt"
    if [ -n "${known[$name]:-}" ]; then
      echo "accepted but does not open (known): $name ($category): $(tail -1 "$work/decoder.err")"
    else
      unknown=$((unknown + 1))
      echo "accepted but does not open: $name ($category): $(tail -1 "$work/decoder.err")"
    fi
  fi
done < <(jq -r 'select(.outcome == "accepted") | [.input, .category] | @tsv' "$work/results.jsonl")

echo "fuzz-accepted: seeds $first-$last, ratio $ratio: ${#cases[@]} mutations, $accepted accepted," \
  "$((${#cases[@]} - accepted)) refused, $unopenable accepted but not openable" \
  "($((unopenable - unknown)) known, $unknown not known)"
[ "$unknown" -eq 0 ]
