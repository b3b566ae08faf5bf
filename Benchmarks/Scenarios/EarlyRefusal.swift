import AttachmentKit
import Synchronization

/// Wraps the pipeline's `StreamingSniffer` and counts the body bytes the transfer delivered
/// before the sniffer (or the downloader) stopped it.
final class CountingInspector: ResponseInspector {
  private let inner: StreamingSniffer
  private let seen = Atomic<Int64>(0)

  /// Wraps a sniffer with `limits`.
  init(limits: ValidationLimits) {
    inner = StreamingSniffer(limits: limits)
  }

  /// Body bytes delivered so far (the end of the last chunk shown).
  var bodyBytes: Int64 { seen.load(ordering: .relaxed) }

  /// Passes the head on.
  func inspect(head: ResponseHead) -> InspectorVerdict { inner.inspect(head: head) }

  /// Counts the chunk, then passes it on.
  func inspect(body chunk: UnsafeRawBufferPointer, at offset: Int64) -> InspectorVerdict {
    seen.store(offset + Int64(chunk.count), ordering: .relaxed)
    return inner.inspect(body: chunk, at: offset)
  }
}

/// Scenario 6: how early a wrong body is refused. A 10 MiB HTML page served as `image/jpeg`
/// (refused by sniffing the first bytes) and a body declaring 60 MiB (refused on its
/// `Content-Length`), fetched with `Downloader` directly with the pipeline's sniffer wrapped
/// in a ``CountingInspector``.
enum EarlyRefusalScenario {
  /// The report section.
  static let section = "6 early refusal"

  /// Times both refusals and counts the bytes received (and, with nginx, sent).
  /// - Throws: ``BenchError`` when a body is not refused with the expected code.
  static func run(_ context: BenchContext, into report: inout Report) async throws {
    let iterations = context.count(full: 50, quick: 10)
    let directory = context.scratch + "/refusal"
    try Files.makeDirectory(directory)
    let configuration = BenchContext.configuration(cacheDirectory: directory)
    var downloaderConfiguration = configuration.downloader
    downloaderConfiguration.maximumBodyBytes = configuration.limits.largestMaximumBytes
    let downloader = Downloader(configuration: downloaderConfiguration)
    let cases: [(key: String, name: String, path: String, code: AttachmentError.Code)] = [
      ("refuse_html", "10 MiB HTML served as image/jpeg", ContentTree.htmlAsJPEGPath, .unsupportedType),
      ("refuse_declared", "Content-Length 60 MiB (WAV head)", ContentTree.declaredPath, .tooLarge),
    ]
    for item in cases {
      var times: [Duration] = []
      var bytes: [Double] = []
      for iteration in 0..<(iterations + 2) {
        let inspector = CountingInspector(limits: configuration.limits)
        let request = DownloadRequest(
          url: context.server.url(item.path, iteration: iteration), directory: directory,
          inspector: inspector)
        let start = ContinuousClock.now
        let outcome: AttachmentError.Code?  // nil: accepted
        do throws(AttachmentError) {
          _ = try await downloader.download(request, deadline: generousDeadline())
          outcome = nil
        } catch {
          outcome = error.code
        }
        let elapsed = ContinuousClock.now - start
        guard outcome == item.code else {
          throw BenchError(
            "\(item.name): expected \(item.code), got \(outcome.map(\.rawValue) ?? "accepted")")
        }
        if iteration >= 2 {
          times.append(elapsed)
          bytes.append(Double(inspector.bodyBytes))
        }
      }
      let byteDistribution = Distribution(values: bytes)
      report.add(section, "refusal: \(item.name), time", key: item.key, unit: .ms, Distribution(times))
      report.add(
        section, "refusal: \(item.name), body bytes received (max)", key: "\(item.key)_bytes",
        value: byteDistribution.percentile(100), unit: .bytes)
      report.add(
        section, "refusal: \(item.name), body bytes received (p50)", key: "\(item.key)_bytes_p50",
        value: byteDistribution.percentile(50), unit: .bytes)
      try await Task.sleep(for: .milliseconds(300))  // nginx logs a request when it ends
      if let sent = context.server.bodyBytesSent(path: item.path), !sent.isEmpty {
        let sentDistribution = Distribution(values: sent.map(Double.init))
        report.add(
          section, "refusal: \(item.name), body bytes nginx sent (p50, into socket buffers)",
          key: "\(item.key)_server_sent_bytes_p50", value: sentDistribution.percentile(50), unit: .bytes)
        report.add(
          section, "refusal: \(item.name), body bytes nginx sent (max)",
          key: "\(item.key)_server_sent_bytes_max", value: sentDistribution.percentile(100), unit: .bytes)
      }
    }
  }
}
