import Foundation
import TestSupport
import TestTraits
import Testing

/// `attachkit rescue FILE` and `attachkit fetch --rescue URL` decide alike (issue 54, item 1):
/// on every near-miss sample of the manifest, the same outcome, the same error code, the same
/// rescue actions and the same delivered bytes (SHA-256). The two faces reach the rescuers by
/// different roads (a local file; a download into the cache), so a difference here is a
/// decision taken twice.
@Suite("CLI: rescue and fetch --rescue agree on every sample", .serialized, .threadOfItsOwn)
struct RescueParityTests {
  /// What a face answered for one sample.
  struct Verdict: Equatable, CustomStringConvertible {
    var outcome: String
    var code: String?
    var actions: [String]
    var sha256: String?

    init(_ record: [String: Any]) {
      outcome = record["outcome"] as? String ?? "?"
      code = (record["error"] as? [String: Any])?["code"] as? String
      actions = (record["rescued"] as? [String: Any])?["actions"] as? [String] ?? []
      sha256 = record["sha256"] as? String
    }

    var description: String {
      "\(outcome) \(code ?? "-") \(actions) \(sha256?.prefix(12) ?? "-")"
    }
  }

  @Test("every near-miss of the manifest: same outcome, code, actions and SHA-256 by both faces")
  func sameVerdicts() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let server = try TestHTTPServer.start()
    defer { server.stop() }
    server.serveDirectory(prefix: "/media", directory: Media.directory)
    let manifest = try String(contentsOfFile: Media.directory + "/manifest.tsv", encoding: .utf8)
    let nearMisses = manifest.split(separator: "\n").dropFirst().compactMap { line -> String? in
      let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
      guard fields.count > 1, fields[1] != "accepted" else { return nil }
      return String(fields[0])
    }
    try #require(nearMisses.count >= 40, "the manifest lists \(nearMisses.count) near-misses")

    let fetched = try await CLI.run(
      ["fetch", "--json", "--rescue", "--cache-dir", scratch.path + "/cache"]
        + nearMisses.map { server.url("/media/" + $0) })
    var byFetch: [String: Verdict] = [:]
    for line in fetched.stdout.split(separator: "\n") {
      guard let record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
        let input = record["input"] as? String, let name = input.split(separator: "/").last
      else { continue }
      byFetch[String(name)] = Verdict(record)
    }
    try #require(byFetch.count == nearMisses.count, "fetch answered \(byFetch.count) of \(nearMisses.count)")

    var differences: [String] = []
    for name in nearMisses {
      let output = scratch.path + "/out/" + name + ".d/"
      try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
      let rescued = try await CLI.run(["rescue", "--json", Media.directory + "/" + name, "--output", output])
      let line = rescued.stdout.split(separator: "\n").first { $0.hasPrefix("{") }
      let record = line.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
      let byRescue = Verdict(record ?? [:])
      if byRescue != byFetch[name] {
        differences.append(
          "\(name): rescue \(byRescue), fetch --rescue \(byFetch[name].map(\.description) ?? "none")")
      }
    }
    #expect(differences.isEmpty, "\(differences.count) differ:\n\(differences.joined(separator: "\n"))")
  }
}
