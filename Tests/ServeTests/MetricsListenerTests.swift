import Foundation
import TestSupport
import TestTraits
import Testing

/// `serve --metrics-listen`: the operator's routes on a listener of their own, off the public one.
@Suite("attachkit serve --metrics-listen", .serialized, .threadOfItsOwn)
struct MetricsListenerTests {
  /// The port of the `metricsAddress` in serve's `listening` line.
  static func metricsPort(_ serve: ServeProcess) -> Int? {
    let line = serve.events.first { $0["event"] as? String == "listening" }
    return (line?["metricsAddress"] as? String)?.split(separator: ":").last.flatMap { Int($0) }
  }

  @Test(
    "with --metrics-listen, /metrics answers there and 404 on the public port; proxy paths 404 there; /readyz and /healthz on both"
  )
  func separateListener() async throws {
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    let workspace = try Workspace()
    defer { workspace.remove() }
    origin.serve("/a.gif", body: try Media.bytes("gif-static.gif"), contentType: "image/gif")
    let serve = try await ServeProcess(workspace: workspace, ["--metrics-listen", "127.0.0.1:0"])
    defer { serve.stop() }
    let port = try #require(Self.metricsPort(serve), "\(serve.log)")
    #expect(port != serve.port)
    func operatorURL(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    let path = try await serve.signed(origin.url("/a.gif"), keyFile: workspace.keyFile)
    #expect(try await Curl.get(serve.url(path)).status == 200)
    // The public listener: the file, the probes, and no metrics.
    #expect(try await Curl.get(serve.url("/metrics")).status == 404)
    #expect(try await Curl.get(serve.url("/metrics?name=x")).status == 404)
    #expect(try await Curl.get(serve.url("/readyz")).status == 200)
    #expect(try await Curl.get(serve.url("/healthz")).status == 200)
    // The operator listener: its routes, and no file.
    let metrics = try await Curl.get(operatorURL("/metrics"))
    #expect(metrics.status == 200)
    let text = String(decoding: metrics.body, as: UTF8.self)
    #expect(text.contains("attachkit_request_duration_seconds_count{route=\"attachment\"} 1"), "\(text)")
    let ready = try await Curl.get(operatorURL("/readyz"))
    #expect(ready.status == 200 && String(decoding: ready.body, as: UTF8.self) == "ready\n")
    #expect(try await Curl.get(operatorURL("/healthz")).status == 200)
    #expect(try await Curl.get(operatorURL(path)).status == 404)
    #expect(origin.requestCount(path: "/a.gif") == 1)
  }

  @Test(
    "without --metrics-listen, /metrics and /readyz stay on the public listener; the line names no metricsAddress"
  )
  func oneListener() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    #expect(Self.metricsPort(serve) == nil)
    #expect(try await Curl.get(serve.url("/metrics")).status == 200)
    #expect(try await Curl.get(serve.url("/readyz")).status == 200)
  }

  @Test("a --metrics-listen address that is in use or malformed is exit 2, naming the option")
  func badAddress() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    let taken = try await ServeProcess(workspace: workspace)
    defer { taken.stop() }
    for (value, words) in [
      ("127.0.0.1:\(taken.port)", "(--metrics-listen): Address already in use"),
      ("127.0.0.1:http", "--metrics-listen expects"),
      ("localhost:9100", "--metrics-listen address is not"),
    ] {
      let run = try await Run.process(
        Binaries.attachkit,
        [
          "serve", "--listen", "127.0.0.1:0", "--metrics-listen", value, "--key-file", workspace.keyFile,
          "--cache-dir", workspace.cache + "-\(value.count)",
        ])
      #expect(run.status == 2, "\(value): \(run.stderr)")
      #expect(run.stderr.contains(words), "\(value): \(run.stderr)")
    }
  }
}
