/// The brief's goals, checked against one run.
enum Goals {
  /// Every goal with what was measured; `met` is `nil` when the run did not measure it.
  static func check(_ report: Report) -> [GoalCheck] {
    var checks: [GoalCheck] = []
    func latency(_ key: String, _ percentile: Double, atMost limit: Double, _ goal: String) {
      guard let row = report.latency(key) else {
        checks.append(GoalCheck(goal: goal, measured: "not measured", met: nil))
        return
      }
      let value = row.distribution.percentile(percentile)
      checks.append(GoalCheck(goal: goal, measured: Format.seconds(value), met: value <= limit))
    }
    func ratio(_ key: String, atMost limit: Double, strictly: Bool = false, _ goal: String) {
      guard let row = report.ratio(key) else {
        checks.append(GoalCheck(goal: goal, measured: "not measured", met: nil))
        return
      }
      let met = strictly ? row.ratio < limit : row.ratio <= limit
      checks.append(GoalCheck(goal: goal, measured: Format.ratio(row.ratio), met: met))
    }
    func value(_ key: String, atMost limit: Double, _ goal: String) {
      guard let row = report.value(key) else {
        checks.append(GoalCheck(goal: goal, measured: "not measured", met: nil))
        return
      }
      checks.append(GoalCheck(goal: goal, measured: Format.value(row), met: row.value <= limit))
    }
    latency("hit", 50, atMost: 5e-6, "in-process hit p50 ≤ 5 µs (issue #56)")
    latency("hit", 99, atMost: 25e-6, "in-process hit p99 ≤ 25 µs (issue #56)")
    ratio("curl_45m_ratio", atMost: 1.0, "cold 45 MiB ≤ 1.0× curl (p50 wall time; issue #41)")
    ratio("urlsession_45m_ratio", atMost: 1.0, strictly: true, "cold 45 MiB ahead of URLSession")
    ratio("batch_c16_ratio_curl", atMost: 1.0, "batch c=16 at least as fast as curl --parallel")
    ratio(
      "batch_cli_c16_ratio_curl", atMost: 0.8,
      "attachkit prefetch -j 16 ≤ 0.8× curl --parallel (command line)")
    ratio(
      "batch_cli_c16_cpu_ratio_curl", atMost: 2.0,
      "attachkit prefetch -j 16 ≤ 2.0× curl --parallel's CPU time (issue #41)")
    ratio(
      "churn_c16_ratio_curl", atMost: 1.2,
      "churn into a full 20 MiB cache, c=16, ≤ 1.2× curl --parallel (issue #41)")
    ratio(
      "cli_hit_ratio_curl", atMost: 0.33, "attachkit fetch hit ≤ 0.33× curl downloading the file (issue #41)")
    ratio(
      "serve_hit_ratio_nginx", atMost: 1.25,
      "serve hits ≥ 0.8× nginx's requests/s, time per request ≤ 1.25× (issue #41)")
    ratio("rescue_24mp_ratio_vips", atMost: 1.0, "rescue of a 24 MP JPEG ≤ 1.0× vipsthumbnail (wall time)")
    ratio("rescue_24mp_rss_ratio_vips", atMost: 1.2, "rescue of a 24 MP JPEG ≤ 1.2× vipsthumbnail (peak RSS)")
    ratio(
      "store_hit_ratio_curl", atMost: 1.2,
      "a cold instance's hit from the store ≤ 1.2× curl --aws-sigv4 of the object (issue #55)")
    ratio(
      "fleet_transcodes_ratio", atMost: 0.34,
      "fleet: transcodes with the store ≤ a third of without (issue #55)")
    ratio(
      "fleet_origin_bytes_ratio", atMost: 0.34,
      "fleet: origin bytes with the store ≤ a third of without (issue #55)")
    ratio(
      "fleet_work_cpu_ms_ratio", atMost: 0.34,
      "fleet: the campaign's CPU with the store ≤ a third of without (issue #55)")
    value("refuse_html_bytes", atMost: 16_384, "HTML page refused after ≤ 16 KiB (worst run; issue #56)")
    latency("deadline_overshoot", 99, atMost: 0.005, "deadline overshoot p99 ≤ 5 ms (issue #56)")
    value("growth_rss_45m_mib", atMost: 2 * 1_048_576, "RSS growth during a 45 MiB download ≤ 2 MiB")
    value(
      "growth_rss_45m_warm_mib", atMost: 2 * 1_048_576,
      "same, after a 100 KiB WAV first (libcurl loaded, libmagic pages in)")
    value("serve_peak_rss_mib", atMost: 64 * 1_048_576, "serve's peak RSS under wrk ≤ 64 MiB (issue #56)")
    value("rescue_worker_first_ms", atMost: 0.040, "a rescue worker's first job ≤ 40 ms (issue #56)")
    value("rescue_worker_warm_ms", atMost: 0.005, "a warm rescue worker's job ≤ 5 ms (issue #56)")
    return checks
  }
}
