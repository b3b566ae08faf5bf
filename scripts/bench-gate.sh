#!/usr/bin/env bash
# The benchmark gate of .ci/run: reads the JSON reports of repeated rounds of
# `attachkit-bench --quick --json FILE` (CI runs three) and gates each figure's median over them:
# it fails when a figure CI reads is missing or not a number in any report, or when its median is
# under its floor or over its limit.
# Usage: scripts/bench-gate.sh REPORT.json [REPORT.json ...]
#
# The table below is the only place the figures CI reads and their bounds live; every figure has
# both (issue #39, item 4):
# - min: the floor. A value under it means the scenario is broken, not fast: a time or RSS of
#   about 0, an overshoot below 0 (answered before the deadline), no HTML body read before the
#   refusal, a fan-in other than exactly 1 upstream request, a ratio far under any run seen.
# - limit: 1.5x the goal where the medians of repeated quick rounds on this shared two-core
#   machine meet 1.5x the goal. Where they do not, the limit is what the medians support (about
#   1.5x the median) and the note says "not at 1.5x its goal: median X, goal Y". Absolute times
#   and RSS with no goal stated in the README or docs get 1.5x the median as their goal (the note
#   says so), and the same 1.5x over it as their limit.
# Why medians of rounds: a single quick round on two shared cores crossed some limit in five of
# six rounds (each note names its run over the limit), while the median of the rounds met every
# limit; one round is noise, a regression moves the median.
# The runs in the notes are six quick rounds of the release build on 2026-12-05, the two cores
# shared with other sessions' builds and tests (load average at a round's start and end: 8.3-11.4,
# 34.7-8.7, 8.7-7.2, 7.2-9.2, 4.3-5.6, 5.6-6.0; a seventh stopped at load 34.7 on wrk's errors
# against serve).
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 REPORT.json [REPORT.json ...]" >&2; exit 2; }
reports=("$@")
for report in "${reports[@]}"; do
  [ -r "$report" ] || { echo "bench-gate: cannot read $report" >&2; exit 2; }
done

# median VALUE...: the middle value (the mean of the two middle ones for an even count).
median() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# key                                  min     limit   goal    note
limits=$(
  cat <<'TABLE'
urlsession_45m_ratio                   0.1     1.5     1       cold 45 MiB / URLSession (median 0.578, runs 0.549, 1.679, 0.514, 0.697, 0.532, 0.606; a run over the limit (1.679))
curl_45m_ratio                         0.1     1.5     1       cold 45 MiB / curl (median 0.963, runs 0.843, 0.765, 0.983, 1.225, 1.149, 0.943)
batch_c16_ratio_curl                   0.1     1.5     1       in-process batch c=16 / curl --parallel, each round the median of 5 alternating runs after an untimed one; median of 3 rounds (before alternation: median 1.257, runs 0.541, 2.236, 1.361, 1.445, 1.114, 1.154; a run over the limit (2.236))
batch_cli_c16_ratio_curl               0.1     3.0     0.8     prefetch -j 16 / curl --parallel, median of 3 (median 1.697, runs 2.644, 1.281, 3.138, 1.765, 1.359, 1.629; not at 1.5x its goal: median 1.697, goal 0.8; the median of r1, r3, r4 was 2.644, so the limit is the old 3.0)
churn_c16_ratio_curl                   0.1     2.4     1.2     churn into a full 20 MiB cache / curl --parallel, median of 3 (median 1.503, runs 1.086, 0.656, 1.59, 1.582, 1.423, 1.981; not at 1.5x its goal: the 2026-12-05 rehearsal's three rounds were 1.694, 1.906, 1.986 (median over 1.8) and quiet single runs of the same binary 1.24 and 1.60, the README's full runs 1.75 and 2.05; curl's own rate moves between 2200 and 3200 files/s from run to run; so the limit is 2x the goal)
serve_hit_ratio_nginx                  0.1     1.875   1.25    serve hit, time per request / nginx, median of 3 rounds (median 1.487, runs 1.461, 0.758, 1.782, 1.503, 1.47, 1.733)
cli_hit_ratio_curl                     0.05    0.55    0.33    attachkit fetch hit / curl (median 0.489, runs 0.52, 0.29, 0.472, 0.56, 0.497, 0.481; not at 1.5x its goal reliably: 1.5x is 0.495 and the median of r5-r7 was 0.497; the goal is under the Swift runtime's own start, 0.37)
cli_cold_45m_ratio_curl                0.1     2.4     1       attachkit fetch cold 45 MiB / curl (median 1.594, runs 1.805, 1.385, 2.98, 1.602, 1.586, 1.184; not at 1.5x its goal: median 1.594, goal 1; a run over the limit (2.98))
sniff_1byte_ratio                      0.5     1.65    1.1     1-byte writes sniffed / not sniffed (median 0.946, runs 0.904, 1.409, 1.676, 0.978, 0.915, 0.764; a run over the limit (1.676))
rescue_24mp_ratio_vips                 0.2     1.5     1       24 MP JPEG rescue / vipsthumbnail, wall (median 0.976, runs 1.369, 0.802, 1.188, 0.975, 0.976, 0.961)
rescue_24mp_rss_ratio_vips             0.3     1.8     1.2     same, peak RSS (median 0.995, runs 0.982, 1, 0.997, 1.002, 0.989, 0.994)
media_transcode_720p_ratio_ffmpeg      0.1     1.5     1       720p transcode / ffmpeg, wall (median 0.959, runs 0.475, 0.63, 1.012, 0.949, 0.97, 1.237)
media_transcode_720p_rss_ratio_ffmpeg  0.3     1.8     1.2     same, peak RSS (median 0.928, runs 0.907, 0.928, 0.93, 0.928, 0.93, 0.927)
media_trim_copy_ratio_ffmpeg           0.2     2.6     1       stream-copy trim / ffmpeg, wall (the copy check decodes the first GOP and all audio) (median 1.693, runs 1.196, 1.084, 1.887, 1.964, 1.59, 1.797; not at 1.5x its goal: median 1.693, goal 1)
media_poster_ratio_ffmpeg              0.1     1.5     1       JPEG poster of a 720p VP9 WebM / ffmpeg -frames:v 1, wall (median 0.706, runs 0.617, 0.692, 0.738, 0.693, 0.72, 0.8)
media_rewrap_ts_ratio_ffmpeg           0.1     1.5     1       28 s H.264+AAC MPEG-TS re-wrapped in MP4 / ffmpeg -c copy (#42) (median 1.312, runs 0.793, 1.031, 1.778, 1.512, 1.187, 1.436; a run over the limit (1.778))
media_transcode_flv_ratio_ffmpeg       0.1     1.5     1       20 s CIF FLV -> H.264+AAC / ffmpeg (#42) (median 0.783, runs 0.787, 0.718, 0.783, 0.784, 0.724, 0.836)
media_transcode_wmv_ratio_ffmpeg       0.1     1.5     1       20 s CIF ASF (WMV 8 + WMA 2) -> H.264+AAC / ffmpeg (#42) (median 0.894, runs 0.904, 0.89, 0.898, 0.636, 0.863, 1.006)
media_transcode_3gp_ratio_ffmpeg       0.1     1.5     1       20 s CIF 3GP (H.263 + AAC) -> H.264+AAC / ffmpeg (#42) (median 0.646, runs 0.645, 0.578, 0.728, 0.406, 0.719, 0.647)
media_transcode_flac_ratio_ffmpeg      0.1     1.5     1       60 s stereo FLAC -> AAC in M4A / ffmpeg (#42) (median 0.959, runs 1.291, 1.226, 0.889, 0.854, 0.961, 0.957)
media_shrink_ratio_ffmpeg              0.1     1.5     1       60 MB 1080p shrunk under 50 MB at 720p / ffmpeg (#42) (median 0.798, runs 0.922, 0.774, 1.071, 0.776, 0.82, 0.664)
refuse_html_bytes                      1       98304   65536   body bytes read before an HTML page is refused (floor: none read is a broken scenario) (median 16384, runs 16384, 16384, 16384, 16384, 16384, 16384)
serve_fanin_upstream_requests          1       1       1       200 concurrent requests of one URL reach the origin exactly once (median 1, runs 1, 1, 1, 1, 1, 1)
hit_p50_us                             0.5     15      10      in-process hit p50 (goal #41) (median 8.365, runs 7.674, 8.495, 8.527, 8.235, 8.536, 7.884)
hit_p99_us                             0.5     75      50      in-process hit p99 (goal #41) (median 17.538, runs 14.187, 20.368, 19.817, 14.908, 19.586, 15.489)
cold_100k_p50_ms                       0.05    3       2       cold 100 KiB p50 (median 1.296, runs 1.3, 1.56, 1.292, 1.149, 1.666, 1.075; no goal stated: goal 1.5x the median)
cold_45m_p50_ms                        5       270     180     cold 45 MiB p50 (floor: SHA-256 alone of 45 MiB takes more) (median 115.55, runs 111.886, 818.153, 144.105, 119.214, 109.268, 71.854; no goal stated: goal 1.5x the median; a run over the limit (818.153))
deadline_overshoot_p99_ms              0       75      50      deadline overshoot p99; goal: the benchmark's 50 ms, inside the 250 ms promise (docs/faults.md) (floor 0: never answered before the deadline) (median 0.886, runs 0.984, 2.737, 0.505, 0.453, 1.137, 0.787)
peak_rss_45m_mib                       1       57      38      peak RSS of a 45 MiB download (median 24.904, runs 25.074, 24.906, 25.02, 24.863, 24.844, 24.902; no goal stated: goal 1.5x the median)
baseline_rss_mib                       1       47      31      RSS of a fresh pipeline (median 20.258, runs 20.297, 19.996, 20.258, 20.348, 20.258, 20.156; no goal stated: goal 1.5x the median)
serve_hit_p99_ms                       0.05    100     5       serve p99 under wrk -c64 (nginx's own p99 is as high under this load) (median 31.08, runs 70.67, 128.64, 35.42, 26.74, 21.79, 8.25; not at 1.5x its goal: median 31.08, goal 5; the median of r1, r3, r4 was 70.67: the limit stops a doubling of that)
serve_peak_rss_mib                     1       96      64      serve peak RSS under wrk (median 23.336, runs 22.801, 22.906, 23.078, 23.652, 23.699, 23.594)
serve_transcodes_rss_mib               1       96      64      serve --rescue peak RSS while two 720p WebMs are transcoded at once (#51: goal 64 MiB; by hand on 2026-12-07, 25.8 MiB)
rescue_worker_first_ms                 1       120     79      a rescue on a new worker (its start and libvips load) (median 52.18, runs 120.118, 73.631, 56.811, 47.549, 41.898, 36.126; no goal stated: goal 1.5x the median; a run over the limit (120.118))
rescue_worker_warm_ms                  0.1     33      22      the same rescue on the warm spare: since #51 every job runs in a worker of its own, started ahead and confined for the job, so this is a fresh process's first job (quick rounds 2026-12-07: median 14.5, runs 9.45, 14.64, 14.48, 25.47; on a reused worker, rescue_worker_reused_ms, 3.3-5.0; no goal stated: goal 1.5x the median)
TABLE
)
printf '%-38s %14s %10s %10s  %-10s %s\n' KEY MEDIAN MIN LIMIT RESULT RUNS
failed=()
while read -r key min limit _; do
  runs=()
  missing=0
  for report in "${reports[@]}"; do
    value=$(jq -r --arg key "$key" '.[$key] | if type == "number" then tostring else "missing" end' "$report")
    if [ "$value" = "missing" ]; then missing=1; else runs+=("$value"); fi
  done
  value=missing
  ((missing)) || value=$(median "${runs[@]}")
  if [ "$min" = "-" ] || [ "$limit" = "-" ]; then
    # the table itself is wrong: every figure has a floor and a limit
    result="FAIL: no floor or limit in the gate's table"
    failed+=("$key (no bound in the table)")
  elif [ "$value" = "missing" ]; then
    result="FAIL: not a number in every report"
    failed+=("$key (missing)")
  elif awk -v value="$value" -v min="$min" 'BEGIN { exit !(value + 0 < min + 0) }'; then
    result="FAIL: under its floor (a broken scenario)"
    failed+=("$key = $value < $min")
  elif awk -v value="$value" -v limit="$limit" 'BEGIN { exit !(value + 0 > limit + 0) }'; then
    result="FAIL: over its limit"
    failed+=("$key = $value > $limit")
  else
    result="ok"
  fi
  printf '%-38s %14s %10s %10s  %-10s %s\n' "$key" "$value" "$min" "$limit" "$result" "${runs[*]:-}"
done <<<"$limits"

if ((${#failed[@]})); then
  echo "bench-gate: ${#failed[@]} benchmark figure(s) failed the gate (medians of ${#reports[@]} report(s)):" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "bench-gate: every figure's median over ${#reports[@]} report(s) is a number, at least its floor and within its limit"
