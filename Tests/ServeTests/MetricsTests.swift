import Foundation
import TestSupport
import TestTraits
import Testing

/// `/metrics` as Prometheus' own parsers read it, and `/readyz`.
@Suite("attachkit serve metrics and readiness", .serialized, .threadOfItsOwn)
struct MetricsTests {
  /// One sample as `prometheus_client` parsed it.
  struct Sample {
    var name: String
    var labels: [String: String]
    var value: Double
  }

  /// The samples of the exposition at `file`, parsed by `prometheus_client` (`nil`: it is not
  /// installed), after `promtool check metrics` where promtool is installed.
  static func parse(_ file: String) async throws -> [Sample]? {
    if FileManager.default.isExecutableFile(atPath: "/usr/bin/promtool") {
      let lint = try await Run.process("/bin/sh", ["-c", "/usr/bin/promtool check metrics < \"$0\"", file])
      #expect(lint.status == 0, "promtool: \(lint.text) \(lint.stderr)")
    }
    let script = """
      import json, sys
      try:
          from prometheus_client.parser import text_string_to_metric_families
      except ImportError:
          sys.exit(3)
      samples = []
      for family in text_string_to_metric_families(open(sys.argv[1]).read()):
          for sample in family.samples:
              samples.append({"name": sample.name, "labels": sample.labels, "value": sample.value})
      print(json.dumps(samples))
      """
    let run = try await Run.process("/usr/bin/python3", ["-c", script, file])
    if run.status == 3 { return nil }
    #expect(run.status == 0, "prometheus_client could not parse the exposition: \(run.stderr)")
    let objects = (try? JSONSerialization.jsonObject(with: run.stdout)) as? [[String: Any]] ?? []
    return objects.map { object in
      Sample(
        name: object["name"] as? String ?? "", labels: object["labels"] as? [String: String] ?? [:],
        value: object["value"] as? Double ?? (object["value"] as? Int).map(Double.init) ?? .nan)
    }
  }

  @Test(
    "the latency histogram has a route label; cache, upstream duration, bytes sent, process_* and build info parse; /readyz"
  )
  func metricsParseAndReadiness() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    let gif = try Media.bytes("gif-static.gif")
    origin.serve("/a.gif", body: gif, contentType: "image/gif", headers: [("Cache-Control", "max-age=600")])
    origin.serve("/page.jpg", body: try Media.bytes("html-error-page.html"), contentType: "image/jpeg")
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let file = serve.url(try await serve.signed(origin.url("/a.gif"), keyFile: workspace.keyFile))
    #expect(try await Curl.get(file).status == 200)
    #expect(try await Curl.get(file).status == 200)
    let refused = serve.url(try await serve.signed(origin.url("/page.jpg"), keyFile: workspace.keyFile))
    #expect(try await Curl.get(refused).status == 422)
    #expect(try await Curl.get(serve.url("/healthz")).status == 200)
    let ready = try await Curl.get(serve.url("/readyz"))
    #expect(ready.status == 200)
    #expect(String(decoding: ready.body, as: UTF8.self) == "ready\n")

    let exposition = workspace.path + "/metrics.txt"
    try writeTestFile(Data(try await Curl.get(serve.url("/metrics")).body), to: exposition)
    guard let samples = try await Self.parse(exposition) else {
      try Skips.skipRest(
        "prometheus_client is not installed (scripts/install-deps.sh installs python3-prometheus-client)")
    }
    func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
      samples.first { sample in
        sample.name == name && labels.allSatisfy { key, value in sample.labels[key] == value }
      }?.value
    }
    #expect(value("attachkit_request_duration_seconds_count", ["route": "attachment"]) == 3)
    #expect(value("attachkit_request_duration_seconds_count", ["route": "healthz"]) == 1)
    #expect(value("attachkit_request_duration_seconds_bucket", ["route": "attachment", "le": "+Inf"]) == 3)
    #expect(value("attachkit_upstream_duration_seconds_count") == 2)
    #expect(value("attachkit_cache_entries") == 1)
    #expect(value("attachkit_cache_bytes") == Double(gif.count))
    #expect((value("attachkit_response_bytes_total") ?? 0) >= Double(2 * gif.count))
    #expect((value("process_resident_memory_bytes") ?? 0) > 1_000_000)
    #expect((value("process_open_fds") ?? 0) >= 3)
    #expect((value("process_cpu_seconds_total") ?? 0) > 0)
    let started = value("process_start_time_seconds") ?? 0
    #expect(abs(started - Date().timeIntervalSince1970) < 600, "start time \(started)")
    let build = samples.first { $0.name == "attachkit_build_info" }
    #expect(build?.value == 1)
    #expect(build?.labels["version"].map { !$0.isEmpty && $0 != "unknown" } == true)

    // A cache directory gone (a file in its place): not ready, and it says why.
    try FileManager.default.moveItem(atPath: workspace.cache, toPath: workspace.cache + ".gone")
    #expect(FileManager.default.createFile(atPath: workspace.cache, contents: Data()))
    let gone = try await Curl.get(serve.url("/readyz"))
    #expect(gone.status == 503)
    #expect(String(decoding: gone.body, as: UTF8.self).contains("cache directory"))
  }
}
