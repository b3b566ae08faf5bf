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
#   rule applied and where its median comes from: the six quick rounds of 2026-12-05 (the old
#   table's notes), or one round of 2026-12-07 taken while two other builds shared the cores
#   (for the figures the gate did not read before); the closing note of issue #56 says how three
#   clean rounds and two deliberate 2x slowdowns did against it.
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
urlsession_45m_ratio                   median 0.1       1.0        cold 45 MiB / URLSession; goal 1 met (median 0.578): the goal [2026-12-05 rounds]
curl_45m_ratio                         median 0.1       1.252      cold 45 MiB / curl; goal 1 met (median 0.963): 1.3x the median, for the noise [2026-12-05 rounds]
batch_c16_ratio_curl                   median 0.1       1.583      in-process batch c=16 / curl --parallel; goal 1 not met (median 1.218): 1.3x the median [one loaded round 2026-12-07]
batch_cli_c16_ratio_curl               median 0.1       2.206      prefetch -j 16 / curl --parallel, wall; goal 0.8 not met (median 1.697): 1.3x the median [2026-12-05 rounds]
batch_cli_c16_cpu_ratio_curl           median 0.1       2.287      prefetch -j 16 / curl --parallel, CPU; goal 2 met (median 1.759): 1.3x the median, for the noise [one loaded round 2026-12-07]
churn_c16_ratio_curl                   median 0.1       1.954      churn into a full 20 MiB cache / curl --parallel; goal 1.2 not met (median 1.503): 1.3x the median [2026-12-05 rounds]
serve_hit_ratio_nginx                  median 0.1       1.933      serve hit, time per request / nginx; goal 1.25 not met (median 1.487): 1.3x the median [2026-12-05 rounds]
cli_hit_ratio_curl                     median 0.05      0.6357     attachkit fetch hit / curl; goal 0.33 not met (median 0.489): 1.3x the median [2026-12-05 rounds]
cli_cold_45m_ratio_curl                median 0.1       2.072      attachkit fetch cold 45 MiB / curl; goal 1 not met (median 1.594): 1.3x the median [2026-12-05 rounds]
sniff_1byte_ratio                      median 0.5       1.23       1-byte writes sniffed / not sniffed; goal 1.1 met (median 0.946): 1.3x the median, for the noise [2026-12-05 rounds]
rescue_24mp_ratio_vips                 median 0.2       1.269      24 MP JPEG rescue / vipsthumbnail, wall; goal 1 met (median 0.976): 1.3x the median, for the noise [2026-12-05 rounds]
rescue_24mp_rss_ratio_vips             median 0.3       1.294      same, peak RSS; goal 1.2 met (median 0.995): 1.3x the median, for the noise [2026-12-05 rounds]
rescue_24mp_orient6_ratio_vips         median 0.2       1.515      24 MP JPEG, orientation 6 / vipsthumbnail, wall; goal 1 not met (median 1.165): 1.3x the median [one loaded round 2026-12-07]
rescue_24mp_orient6_rss_ratio_vips     median 0.3       1.334      same, peak RSS; goal 1.2 met (median 1.026): 1.3x the median, for the noise [one loaded round 2026-12-07]
rescue_png16_ratio_vips                median 0.2       1.301      16-bit PNG / vipsthumbnail, wall; goal 1 not met (median 1.001): 1.3x the median [one loaded round 2026-12-07]
rescue_png16_rss_ratio_vips            median 0.3       1.377      same, peak RSS; goal 1.2 met (median 1.059): 1.3x the median, for the noise [one loaded round 2026-12-07]
rescue_12mp_12mb_ratio_vips            median 0.1       1.0        12 MP 12 MB JPEG / vipsthumbnail, wall; goal 1 met (median 0.593): the goal [one loaded round 2026-12-07]
rescue_12mp_12mb_rss_ratio_vips        median 0.3       1.533      same, peak RSS; goal 1.2 met (median 1.179): 1.3x the median, for the noise [one loaded round 2026-12-07]
rescue_heic_ratio_vips                 median 0.02      0.2299     HEIC / vips, wall; goal 1 met (median 0.121): 1.9x the median, so a 2x regression fails [one loaded round 2026-12-07]
rescue_heic_rss_ratio_vips             median 0.3       1.318      same, peak RSS; goal 1.2 met (median 1.014): 1.3x the median, for the noise [one loaded round 2026-12-07]
rescue_webp_ratio_vips                 median 0.02      0.2033     WebP / vips, wall; goal 1 met (median 0.107): 1.9x the median, so a 2x regression fails [one loaded round 2026-12-07]
rescue_webp_rss_ratio_vips             median 0.3       1.366      same, peak RSS; goal 1.2 met (median 1.051): 1.3x the median, for the noise [one loaded round 2026-12-07]
media_transcode_720p_ratio_ffmpeg      median 0.1       1.247      720p transcode / ffmpeg, wall; goal 1 met (median 0.959): 1.3x the median, for the noise [2026-12-05 rounds]
media_transcode_720p_rss_ratio_ffmpeg  median 0.3       1.206      same, peak RSS; goal 1.2 met (median 0.928): 1.3x the median, for the noise [2026-12-05 rounds]
media_trim_copy_ratio_ffmpeg           median 0.2       1.82       stream-copy trim / ffmpeg -c copy, wall (issue 51 by hand 1.31, quick rounds 1.39-1.44); goal 1.2 not met (median 1.4): 1.3x the median [one loaded round 2026-12-07]
media_trim_copy_rss_ratio_ffmpeg       median 0.3       1.278      same, peak RSS; goal 1.2 met (median 0.983): 1.3x the median, for the noise [one loaded round 2026-12-07]
media_poster_ratio_ffmpeg              median 0.1       1.0        JPEG poster / ffmpeg -frames:v 1, wall; goal 1 met (median 0.706): the goal [2026-12-05 rounds]
media_poster_rss_ratio_ffmpeg          median 0.3       1.2        same, peak RSS; goal 1.2 met (median 0.701): the goal [one loaded round 2026-12-07]
media_rewrap_ts_ratio_ffmpeg           median 0.1       1.706      MPEG-TS re-wrapped in MP4 / ffmpeg -c copy; goal 1 not met (median 1.312): 1.3x the median [2026-12-05 rounds]
media_rewrap_ts_rss_ratio_ffmpeg       median 0.3       1.2        same, peak RSS; goal 1.2 met (median 0.888): the goal [one loaded round 2026-12-07]
media_transcode_flv_ratio_ffmpeg       median 0.1       1.018      FLV -> H.264+AAC / ffmpeg; goal 1 met (median 0.783): 1.3x the median, for the noise [2026-12-05 rounds]
media_transcode_flv_rss_ratio_ffmpeg   median 0.3       1.2        same, peak RSS; goal 1.2 met (median 0.859): the goal [one loaded round 2026-12-07]
media_transcode_wmv_ratio_ffmpeg       median 0.1       1.162      ASF (WMV 8 + WMA 2) -> H.264+AAC / ffmpeg; goal 1 met (median 0.894): 1.3x the median, for the noise [2026-12-05 rounds]
media_transcode_wmv_rss_ratio_ffmpeg   median 0.3       1.2        same, peak RSS; goal 1.2 met (median 0.852): the goal [one loaded round 2026-12-07]
media_transcode_3gp_ratio_ffmpeg       median 0.1       1.0        3GP (H.263 + AAC) -> H.264+AAC / ffmpeg; goal 1 met (median 0.646): the goal [2026-12-05 rounds]
media_transcode_3gp_rss_ratio_ffmpeg   median 0.3       1.2        same, peak RSS; goal 1.2 met (median 0.835): the goal [one loaded round 2026-12-07]
media_transcode_flac_ratio_ffmpeg      median 0.1       1.247      FLAC -> AAC in M4A / ffmpeg; goal 1 met (median 0.959): 1.3x the median, for the noise [2026-12-05 rounds]
media_transcode_flac_rss_ratio_ffmpeg  median 0.3       1.2        same, peak RSS; goal 1.2 met (median 0.776): the goal [one loaded round 2026-12-07]
media_shrink_ratio_ffmpeg              median 0.1       1.037      60 MB 1080p shrunk under 50 MB / ffmpeg; goal 1 met (median 0.798): 1.3x the median, for the noise [2026-12-05 rounds]
media_shrink_rss_ratio_ffmpeg          median 0.3       1.216      same, peak RSS; goal 1.2 met (median 0.935): 1.3x the median, for the noise [one loaded round 2026-12-07]
hit_p50_us                             median 0.5       10.87      in-process hit p50; goal 5 not met (median 8.365): 1.3x the median [2026-12-05 rounds]
hit_p90_us                             median 0.5       13.12      in-process hit p90; no goal (median 8.2): 1.6x the median, a tail [one loaded round 2026-12-07]
hit_p99_us                             median 0.5       25.0       in-process hit p99; goal 25 met (median 17.538): the goal [2026-12-05 rounds]
cold_100k_p50_ms                       median 0.05      1.685      cold 100 KiB p50; no goal (median 1.296): 1.3x the median [2026-12-05 rounds]
cold_100k_p90_ms                       median 0.05      2.976      cold 100 KiB p90; no goal (median 1.86): 1.6x the median, a tail [one loaded round 2026-12-07]
cold_45m_p50_ms                        median 5         150.2      cold 45 MiB p50 (floor: SHA-256 alone of 45 MiB takes more); no goal (median 115.55): 1.3x the median [2026-12-05 rounds]
revalidate_p99_us                      median 10        1125.0     a revalidation answered 304, p99; no goal (median 703): 1.6x the median, a tail [one loaded round 2026-12-07]
confirm_same_url_p99_us                median 0.5       35.84      a confirmed hit under the same URL, p99; no goal (median 22.4): 1.6x the median, a tail [one loaded round 2026-12-07]
confirm_plain_hit_p99_us               median 0.5       15.2       a plain hit beside key rules, p99; no goal (median 9.5): 1.6x the median, a tail [one loaded round 2026-12-07]
refuse_html_p99_ms                     median 0.05      13.76      an HTML page refused, p99; no goal (median 8.6): 1.6x the median, a tail [one loaded round 2026-12-07]
scale_hit_p99_us                       median 1         101.9      a hit in a cache of many entries, p99; no goal (median 63.7): 1.6x the median, a tail [one loaded round 2026-12-07]
cli_hit_p99_ms                         median 0.05      46.42      attachkit fetch hit as a process, p99; no goal (median 29.0097): 1.6x the median, a tail [one loaded round 2026-12-07]
deadline_overshoot_p99_ms              median 0         1.683      deadline overshoot p99, every fault (floor 0: never answered before the deadline); goal 5 met (median 0.886): 1.9x the median, so a 2x regression fails [2026-12-05 rounds]
deadline_never_overshoot_p99_ms        median 0         1.683      overshoot p99, a server that never answers; goal 5 met (median 0.886): 1.9x the median, so a 2x regression fails [2026-12-05 rounds]
deadline_trickle_overshoot_p99_ms      median 0         1.683      overshoot p99, a server that trickles; goal 5 met (median 0.886): 1.9x the median, so a 2x regression fails [2026-12-05 rounds]
serve_hit_p99_ratio_nginx              median 0.05      1.3        serve's wrk p99 / nginx's in the same alternating rounds (the absolute p99, 8-129 ms over the 2026-12-05 rounds, moves with the load several-fold; the ratio is what is judged); goal 1.0 (issue 54: p99 at most nginx's), 1.07 in one run this week: 1.3x the goal until quiet rounds measure it
peak_rss_45m_mib                       median 1         32.38      peak RSS of a 45 MiB download; no goal (median 24.904): 1.3x the median [2026-12-05 rounds]
baseline_rss_mib                       median 1         26.34      RSS of a fresh pipeline; no goal (median 20.258): 1.3x the median [2026-12-05 rounds]
growth_rss_45m_mib                     median 0         6.227      RSS growth during a 45 MiB download; goal 2 not met (median 4.79): 1.3x the median [one loaded round 2026-12-07]
growth_rss_45m_warm_mib                median 0         1.292      same, after a 100 KiB WAV first; goal 2 met (median 0.68): 1.9x the median, so a 2x regression fails [one loaded round 2026-12-07]
serve_peak_rss_mib                     median 1         44.34      serve peak RSS under wrk; goal 64 met (median 23.336): 1.9x the median, so a 2x regression fails [2026-12-05 rounds]
serve_transcodes_rss_mib               median 1         48.64      serve --rescue peak RSS while two 720p WebMs are transcoded at once; goal 64 met (median 25.6): 1.9x the median, so a 2x regression fails [one loaded round 2026-12-07]
rescue_worker_first_ms                 median 1         67.83      a rescue on a new worker (start, confinement, libvips load); goal 40 not met (median 52.18): 1.3x the median [2026-12-05 rounds]
rescue_worker_warm_ms                  median 0.1       18.85      the same rescue on the warm spare; goal 5 not met (median 14.5): 1.3x the median [2026-12-05 rounds]
serve_fanin_upstream_requests          each   1         1          200 concurrent requests of one URL reach the origin exactly once, in every round
refuse_html_bytes                      each   1         16384      body bytes read before an HTML page is refused, in every round (goal 16 KiB; floor: none read is a broken scenario)
refuse_declared_bytes                  each   0         0          body bytes read before a declared wrong type is refused: none, in every round
churn_cache_bytes_max                  each   1         20971520   the churn cache never over its 20 MiB cap, in every round
serve_hit_rps                          median 5893      1e9        serve hits per second under wrk -c64 (higher is better: the floor is the median / 1.9, so half the rate fails) [one loaded round 2026-12-07: 11196.5]
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
