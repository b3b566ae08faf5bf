#!/usr/bin/env bash
# The benchmark gate of .ci/run: reads the JSON reports of repeated rounds of
# `attachkit-bench --quick --json FILE` (CI runs three) and gates each figure's median over them:
# it fails when a figure CI reads is missing or not a number in any report, or when its median is
# under its floor or over its limit.
# Usage: scripts/bench-gate.sh REPORT.json [REPORT.json ...]
#
# The table below is the only place the figures CI reads and their bounds live; every figure has
# a judgement, a floor and a limit (issues #39, #56):
# - judged: "median" over the rounds (one quick round on two shared cores is noise: single rounds
#   crossed limits their medians meet), or "each": every round on its own, for a figure that
#   must be exact (one upstream request for 200 callers, no byte read before a declared wrong
#   type, the cache within its cap) or a promise no round may break (HTML refused within 16 KiB).
# - min: the floor. Under it the scenario is broken, not fast (a time or RSS of about 0, an
#   overshoot below 0, no HTML byte read), or, for a figure where more is better (serve's
#   requests per second), the limit itself: the median over 1.9, so half the rate fails.
# - limit (issue #56: a 2x regression must fail): the goal where the median meets it with room
#   for the noise; 1.3x the median where it meets it narrowly (the goal under 1.3x the median)
#   or does not meet it; 1.9x the median where the goal is more than 1.9x away (so a 2x
#   regression still fails); tails (p90, p99) with no goal 1.6x the median. Each note says which
#   rule applied, the median and its runs: three quick rounds of the release build on
#   2026-12-07, the machine otherwise idle (the first two before the NAL walk was bounded, which
#   moved only the trim's ratio); the closing note of issue #56 says how further clean rounds
#   and two deliberate 2x slowdowns did against it. serve's absolute p99 is not judged: it moved
#   from 8 to 129 ms with the load in one day's rounds; its ratio to nginx's in the same rounds is.
# Goals are the product's (Benchmarks/Report/Goals.swift, issue #56): hit p50 <= 5 us, p99 <= 25
# us, deadline overshoot p99 <= 5 ms, HTML refused within 16 KiB, RSS growth of a 45 MiB download
# <= 2 MiB, serve's peak RSS <= 64 MiB, a worker's first job <= 40 ms and a warm one <= 5 ms,
# prefetch CPU <= 2.0x curl's; a ratio against a peer has the peer as its goal (1.0; peak RSS
# 1.2).
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

# key                                  judged min       limit      note
limits=$(
  cat <<'TABLE'
urlsession_45m_ratio                   median 0.1       1.0        cold 45 MiB / URLSession; goal 1 met (median 0.6718): the goal; runs 0.6718, 1.078, 0.5717
curl_45m_ratio                         median 0.1       1.341      cold 45 MiB / curl; goal 1 not met (median 1.031): 1.3x the median; runs 1.031, 1.19, 0.8592
batch_c16_ratio_curl                   median 0.1       1.125      in-process batch c=16 / curl --parallel; goal 1 met (median 0.8652): 1.3x the median (the goal is under it); runs 1.253, 0.7136, 0.8652
batch_cli_c16_ratio_curl               median 0.1       1.973      prefetch -j 16 / curl --parallel, wall; goal 0.8 not met (median 1.518): 1.3x the median; runs 2.503, 1.518, 1.232
batch_cli_c16_cpu_ratio_curl           median 0.1       2.851      prefetch -j 16 / curl --parallel, CPU; goal 2 not met (median 2.193): 1.3x the median; runs 3.271, 2.193, 1.933
churn_c16_ratio_curl                   median 0.1       2.011      churn into a full 20 MiB cache / curl --parallel; goal 1.2 not met (median 1.547): 1.3x the median; runs 1.58, 1.547, 1.171
serve_hit_ratio_nginx                  median 0.1       2.038      serve hit, time per request / nginx; goal 1.25 not met (median 1.568): 1.3x the median; runs 1.425, 1.585, 1.568
cli_hit_ratio_curl                     median 0.05      0.6626     attachkit fetch hit / curl; goal 0.33 not met (median 0.5097): 1.3x the median; runs 0.5097, 0.5239, 0.4603
cli_cold_45m_ratio_curl                median 0.1       1.449      attachkit fetch cold 45 MiB / curl; goal 1 not met (median 1.115): 1.3x the median; runs 1.112, 1.115, 1.198
sniff_1byte_ratio                      median 0.5       1.285      1-byte writes sniffed / not sniffed; goal 1.1 met (median 0.9883): 1.3x the median (the goal is under it); runs 0.9569, 0.9883, 0.9994
rescue_24mp_ratio_vips                 median 0.2       1.267      24 MP JPEG rescue / vipsthumbnail, wall; goal 1 met (median 0.9746): 1.3x the median (the goal is under it); runs 0.9746, 1.019, 0.963
rescue_24mp_rss_ratio_vips             median 0.3       1.336      same, peak RSS; goal 1.2 met (median 1.028): 1.3x the median (the goal is under it); runs 1.03, 1.024, 1.028
rescue_24mp_orient6_ratio_vips         median 0.2       1.286      24 MP JPEG, orientation 6 / vipsthumbnail, wall; goal 1 met (median 0.989): 1.3x the median (the goal is under it); runs 1.01, 0.989, 0.9283
rescue_24mp_orient6_rss_ratio_vips     median 0.3       1.333      same, peak RSS; goal 1.2 met (median 1.026): 1.3x the median (the goal is under it); runs 1.026, 1.028, 1.025
rescue_png16_ratio_vips                median 0.2       1.259      16-bit PNG / vipsthumbnail, wall; goal 1 met (median 0.9684): 1.3x the median (the goal is under it); runs 0.9684, 0.9976, 0.9248
rescue_png16_rss_ratio_vips            median 0.3       1.37       same, peak RSS; goal 1.2 met (median 1.054): 1.3x the median (the goal is under it); runs 1.048, 1.054, 1.058
rescue_12mp_12mb_ratio_vips            median 0.1       1.0        12 MP 12 MB JPEG / vipsthumbnail, wall; goal 1 met (median 0.6647): the goal; runs 0.6647, 0.7069, 0.6204
rescue_12mp_12mb_rss_ratio_vips        median 0.3       1.53       same, peak RSS; goal 1.2 met (median 1.177): 1.3x the median (the goal is under it); runs 1.179, 1.172, 1.177
rescue_heic_ratio_vips                 median 0.02      0.3108     HEIC / vips, wall; goal 1 met (median 0.1636): 1.9x the median, so a 2x regression fails; runs 0.1603, 0.1636, 0.184
rescue_heic_rss_ratio_vips             median 0.3       1.304      same, peak RSS; goal 1.2 met (median 1.003): 1.3x the median (the goal is under it); runs 0.9953, 1.005, 1.003
rescue_webp_ratio_vips                 median 0.02      0.2979     WebP / vips, wall; goal 1 met (median 0.1568): 1.9x the median, so a 2x regression fails; runs 0.1799, 0.1568, 0.1546
rescue_webp_rss_ratio_vips             median 0.3       1.358      same, peak RSS; goal 1.2 met (median 1.045): 1.3x the median (the goal is under it); runs 1.045, 1.04, 1.048
media_transcode_720p_ratio_ffmpeg      median 0.1       1.337      720p transcode / ffmpeg, wall; goal 1 not met (median 1.028): 1.3x the median; runs 1.141, 1.011, 1.028
media_transcode_720p_rss_ratio_ffmpeg  median 0.3       1.211      same, peak RSS; goal 1.2 met (median 0.9312): 1.3x the median (the goal is under it); runs 0.9314, 0.931, 0.9312
media_trim_copy_ratio_ffmpeg           median 0.2       2.187      stream-copy trim / ffmpeg -c copy, wall (issue 51 by hand 1.31, quick rounds 1.39-1.44); goal 1.2 not met (median 1.682): 1.3x the median; runs 2.052, 1.682, 1.532
media_trim_copy_rss_ratio_ffmpeg       median 0.3       1.272      same, peak RSS; goal 1.2 met (median 0.9787): 1.3x the median (the goal is under it); runs 0.9787, 0.9816, 0.9761
media_poster_ratio_ffmpeg              median 0.1       1.468      JPEG poster / ffmpeg -frames:v 1, wall; goal 1 not met (median 1.13): 1.3x the median; runs 1.06, 1.13, 1.141
media_poster_rss_ratio_ffmpeg          median 0.3       1.2        same, peak RSS; goal 1.2 met (median 0.6973): the goal; runs 0.6993, 0.6839, 0.6973
media_rewrap_ts_ratio_ffmpeg           median 0.1       1.467      MPEG-TS re-wrapped in MP4 / ffmpeg -c copy; goal 1 not met (median 1.128): 1.3x the median; runs 1.238, 1.128, 1.096
media_rewrap_ts_rss_ratio_ffmpeg       median 0.3       1.2        same, peak RSS; goal 1.2 met (median 0.8904): the goal; runs 0.886, 0.8911, 0.8904
media_transcode_flv_ratio_ffmpeg       median 0.1       1.093      FLV -> H.264+AAC / ffmpeg; goal 1 met (median 0.8407): 1.3x the median (the goal is under it); runs 0.928, 0.7831, 0.8407
media_transcode_flv_rss_ratio_ffmpeg   median 0.3       1.2        same, peak RSS; goal 1.2 met (median 0.8593): the goal; runs 0.8593, 0.8597, 0.8588
media_transcode_wmv_ratio_ffmpeg       median 0.1       1.323      ASF (WMV 8 + WMA 2) -> H.264+AAC / ffmpeg; goal 1 not met (median 1.018): 1.3x the median; runs 1.181, 1.018, 0.984
media_transcode_wmv_rss_ratio_ffmpeg   median 0.3       1.2        same, peak RSS; goal 1.2 met (median 0.8533): the goal; runs 0.8543, 0.8532, 0.8533
media_transcode_3gp_ratio_ffmpeg       median 0.1       1.0        3GP (H.263 + AAC) -> H.264+AAC / ffmpeg; goal 1 met (median 0.6575): the goal; runs 0.584, 0.6575, 0.6686
media_transcode_3gp_rss_ratio_ffmpeg   median 0.3       1.2        same, peak RSS; goal 1.2 met (median 0.834): the goal; runs 0.8352, 0.8308, 0.834
media_transcode_flac_ratio_ffmpeg      median 0.1       1.347      FLAC -> AAC in M4A / ffmpeg; goal 1 not met (median 1.036): 1.3x the median; runs 1.182, 0.9678, 1.036
media_transcode_flac_rss_ratio_ffmpeg  median 0.3       1.2        same, peak RSS; goal 1.2 met (median 0.7732): the goal; runs 0.7725, 0.7742, 0.7732
media_shrink_ratio_ffmpeg              median 0.1       1.315      60 MB 1080p shrunk under 50 MB / ffmpeg; goal 1 not met (median 1.012): 1.3x the median; runs 1.012, 0.9615, 1.017
media_shrink_rss_ratio_ffmpeg          median 0.3       1.218      same, peak RSS; goal 1.2 met (median 0.937): 1.3x the median (the goal is under it); runs 0.937, 0.9388, 0.9356
hit_p50_us                             median 0.5       12.5       in-process hit p50; goal 5 not met: two modes on this machine, a process is fast (7.0-7.4) or slow (10.1-11.8) for its whole run, in the binaries of the morning and the evening alike (7 runs each, 2026-12-07 evening: 2 of 7 slow; CI-style rounds 11.3, 12.2, 11.4); 12.5 fails a 2x regression of the fast mode (14.2), of the slow one, and the deliberate hit-path slowdown of issue 56 (13.0)
hit_p90_us                             median 0.5       13.41      in-process hit p90; no goal (median 8.382): 1.6x the median, a tail; runs 7.411, 8.382, 12.32
hit_p99_us                             median 0.5       20.84      in-process hit p99; goal 25 met (median 10.97): 1.9x the median, so a 2x regression fails; runs 9.244, 10.97, 20.47
cold_100k_p50_ms                       median 0.05      1.955      cold 100 KiB p50; no goal (median 1.504): 1.3x the median; runs 0.8593, 1.504, 2.151
cold_100k_p90_ms                       median 0.05      3.679      cold 100 KiB p90; no goal (median 2.299): 1.6x the median, a tail; runs 1.195, 2.299, 2.744
cold_45m_p50_ms                        median 5         90.33      cold 45 MiB p50 (floor: SHA-256 alone of 45 MiB takes more); no goal (median 69.48): 1.3x the median; runs 69.48, 106.2, 67.88
revalidate_p99_us                      median 10        1411.0     a revalidation answered 304, p99; no goal (median 882.1): 1.6x the median, a tail; runs 500, 882.1, 1103
confirm_same_url_p99_us                median 0.5       38.23      a confirmed hit under the same URL, p99; no goal (median 23.89): 1.6x the median, a tail; runs 14.73, 23.89, 27.98
confirm_plain_hit_p99_us               median 0.5       15.97      a plain hit beside key rules, p99; no goal (median 9.984): 1.6x the median, a tail; runs 6.97, 9.984, 11.09
refuse_html_p99_ms                     median 0.05      2.48       an HTML page refused, p99; no goal (median 1.55): 1.6x the median, a tail; runs 1.55, 1.008, 2.144
scale_hit_p99_us                       median 1         120        a hit in a cache of many entries, p99; no goal: a tail this machine moves 2x between sessions (morning rounds 43-61; evening, the morning binary 56-118 over 7 runs, this one 48-122); 120 fails a 2.2x regression of the morning median (54.78)
cli_hit_p99_ms                         median 0.05      7.166      attachkit fetch hit as a process, p99; no goal (median 4.479): 1.6x the median, a tail; runs 3.894, 4.479, 5.479
deadline_overshoot_p99_ms              median 0         1.697      deadline overshoot p99, every fault (floor 0: never answered before the deadline); goal 5 met (median 0.8931): 1.9x the median, so a 2x regression fails; runs 0.8931, 1.163, 0.8918
deadline_never_overshoot_p99_ms        median 0         1.581      overshoot p99, a server that never answers; goal 5 met (median 0.8319): 1.9x the median, so a 2x regression fails; runs 0.8805, 0.6714, 0.8319
deadline_trickle_overshoot_p99_ms      median 0         1.697      overshoot p99, a server that trickles; goal 5 met (median 0.8931): 1.9x the median, so a 2x regression fails; runs 0.8931, 1.163, 0.8918
peak_rss_45m_mib                       median 1         32.68      peak RSS of a 45 MiB download; no goal (median 25.14): 1.3x the median; runs 25.04, 25.26, 25.14
baseline_rss_mib                       median 1         26.36      RSS of a fresh pipeline; no goal (median 20.28): 1.3x the median; runs 20.53, 20.28, 19.91
growth_rss_45m_mib                     median 0         6.48       RSS growth during a 45 MiB download; goal 2 not met (median 4.984): 1.3x the median; runs 4.512, 4.984, 5.23
growth_rss_45m_warm_mib                median 0         0.8758     same, after a 100 KiB WAV first; goal 2 met (median 0.4609): 1.9x the median, so a 2x regression fails; runs 0.4609, 0.4453, 0.4609
serve_peak_rss_mib                     median 1         43.37      serve peak RSS under wrk; goal 64 met (median 22.83): 1.9x the median, so a 2x regression fails; runs 22.74, 23.41, 22.83
serve_transcodes_rss_mib               median 1         48.15      serve --rescue peak RSS while two 720p WebMs are transcoded at once; goal 64 met (median 25.34): 1.9x the median, so a 2x regression fails; runs 25.34, 25.26, 25.57
rescue_worker_first_ms                 median 1         74.37      a rescue on a new worker (start, confinement, libvips load); goal 40 not met (median 57.21): 1.3x the median; runs 69.82, 44.56, 57.21
rescue_worker_warm_ms                  median 0.1       20.86      the same rescue on the warm spare; goal 5 not met (median 16.05): 1.3x the median; runs 15.3, 16.05, 17.45
serve_hit_p99_ratio_nginx              median 0.05      0.3602     serve's wrk p99 / nginx's in the same alternating rounds (the absolute p99 moves several-fold with the load; the ratio is judged); goal 1.0 (issue 54: at most nginx's), median 0.1896: 1.3x the median; runs 0.1564, 0.2143, 0.1896
serve_fanin_upstream_requests          each   1         1          200 concurrent requests of one URL reach the origin exactly once, in every round
refuse_html_bytes                      each   1         16384      body bytes read before an HTML page is refused, in every round (goal 16 KiB; floor: none read is a broken scenario)
refuse_declared_bytes                  each   0         0          body bytes read before a declared wrong type is refused: none, in every round
churn_cache_bytes_max                  each   1         20971520   the churn cache never over its 20 MiB cap, in every round
fleet_transcodes_ratio                 each   0.3       0.34       three serve --rescue instances round-robin, 6 rescued URLs x 12 requests: transcodes with one store / without, in every round (a third: each URL's work once per fleet; runs 0.3333 x3)
fleet_origin_bytes_ratio               each   0.3       0.34       same, bytes from the origin with one store / without, in every round (a third; runs 0.3333 x3)
fleet_work_cpu_ms_ratio                median 0.1       0.494      same, the campaign's CPU (the fleet's less what it had used once each instance had rescued one warm-up file) with the store / without; goal 0.34 not met (median 0.37): 1.3x the median; runs 0.37, 0.38, 0.37
store_hit_ratio_curl                   median 0.3       1.443      a cold serve instance's hit from the store / curl --aws-sigv4 of the object; goal 1.2 met (median 1.11): 1.3x the median (the goal is under it); runs 1.09, 1.16, 1.24, 1.11, 1.04, 1.14
serve_hit_rps                          median 9185      1e9        serve hits per second under wrk -c64, more is better: the floor is the median / 1.9, so half the rate fails (median 17451; runs 20685, 17276, 17451)
TABLE
)
printf '%-40s %-6s %12s %10s %10s  %-10s %s\n' KEY JUDGED VALUE MIN LIMIT RESULT RUNS
failed=()
# below VALUE MIN / above VALUE LIMIT: whether VALUE is under MIN / over LIMIT.
below() { awk -v value="$1" -v min="$2" 'BEGIN { exit !(value + 0 < min + 0) }'; }
above() { awk -v value="$1" -v limit="$2" 'BEGIN { exit !(value + 0 > limit + 0) }'; }
while read -r key mode min limit _; do
  runs=()
  missing=0
  for report in "${reports[@]}"; do
    value=$(jq -r --arg key "$key" '.[$key] | if type == "number" then tostring else "missing" end' "$report")
    if [ "$value" = "missing" ]; then missing=1; else runs+=("$value"); fi
  done
  # "median": the median of the rounds is judged (one round on two shared cores is noise);
  # "each": every round is (a figure that must be exact, or a promise no round may break).
  judged=()
  value=missing
  if ((!missing)); then
    if [ "$mode" = "each" ]; then judged=("${runs[@]}"); value="${runs[*]}"; value=${value// /,}; else
      value=$(median "${runs[@]}")
      judged=("$value")
    fi
  fi
  result="ok"
  if [ "$min" = "-" ] || [ "$limit" = "-" ] || { [ "$mode" != "median" ] && [ "$mode" != "each" ]; }; then
    # the table itself is wrong: every figure has a mode, a floor and a limit
    result="FAIL: no mode, floor or limit in the gate's table"
    failed+=("$key (no bound in the table)")
  elif ((missing)); then
    result="FAIL: not a number in every report"
    failed+=("$key (missing)")
  else
    for one in "${judged[@]}"; do
      if below "$one" "$min"; then
        result="FAIL: under its floor"
        failed+=("$key = $one < $min")
        break
      elif above "$one" "$limit"; then
        result="FAIL: over its limit"
        failed+=("$key = $one > $limit")
        break
      fi
    done
  fi
  printf '%-40s %-6s %12s %10s %10s  %-10s %s\n' "$key" "$mode" "$value" "$min" "$limit" "$result" "${runs[*]:-}"
done <<<"$limits"

if ((${#failed[@]})); then
  echo "bench-gate: ${#failed[@]} benchmark figure(s) failed the gate (medians of ${#reports[@]} report(s)):" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "bench-gate: every figure's median over ${#reports[@]} report(s) is a number, at least its floor and within its limit"
