import AttachmentKit
import Foundation
import TestSupport
import TestTraits
import Testing

/// Profile routes against a real `attachkit serve` and a real origin on loopback: the profile a
/// path names is covered by its signature, each profile's file is served to its own paths only.
@Suite("attachkit serve: profile routes", .threadOfItsOwn)
struct ProfileServeTests {
  /// `attachkit sign` with `arguments`, its path (the test fails when it exits non-zero).
  private func sign(_ arguments: [String], keyFile: String) async throws -> String {
    let run = try await Run.process(Binaries.attachkit, ["sign", "--key-file", keyFile] + arguments)
    try #require(run.status == 0, "\(run.stderr)")
    return run.text.trimmingCharacters(in: .whitespacesAndNewlines)
  }

  @Test("/v1/android/a/… serves the android derivative, /v1/a/… the original, from one origin request each")
  func twoPlatformsOneOrigin() async throws {
    // Given a 1600-pixel JPEG on the origin, and its ios and android paths
    let workspace = try Workspace()
    defer { workspace.remove() }
    let photo = workspace.path + "/photo.jpg"
    let made = await ImageBombs.vips(["gaussnoise", photo, "1600", "1000"])
    try #require(made == 0, "vips gaussnoise failed with \(made)")
    let original = Array(try Data(contentsOf: URL(fileURLWithPath: photo)))
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    origin.serve(
      "/p.jpg", body: original, contentType: "image/jpeg", headers: [("Cache-Control", "max-age=600")])
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let iosPath = try await sign([origin.url("/p.jpg")], keyFile: workspace.keyFile)
    let androidPath = try await sign(
      ["--profile", "android", origin.url("/p.jpg")], keyFile: workspace.keyFile)
    #expect(androidPath.hasPrefix("/v1/android/a/"))
    #expect(
      try await sign(["--profile", "ios", origin.url("/p.jpg")], keyFile: workspace.keyFile) == iosPath)

    // When each is asked for twice, android first
    let android = try await Curl.get(serve.url(androidPath))
    let ios = try await Curl.get(serve.url(iosPath))
    let androidAgain = try await Curl.get(serve.url(androidPath))
    let iosAgain = try await Curl.get(serve.url(iosPath))

    // Then android gets a JPEG of 1024 pixels and at most 1 MB, ios the origin's bytes, each again
    #expect(android.status == 200 && android.header("Content-Type") == "image/jpeg")
    #expect(android.body.count <= 1_000_000)
    let file = workspace.path + "/android.jpg"
    try android.body.write(to: URL(fileURLWithPath: file))
    let delivered = try Validator().validate(file: file)
    #expect(delivered.width == 1024 && delivered.height == 640)
    #expect(ios.status == 200 && Array(ios.body) == original)
    #expect(androidAgain.body == android.body)
    #expect(Array(iosAgain.body) == original)
    // and the origin was asked once per profile
    #expect(origin.requestCount(path: "/p.jpg") == 2)
    // and the access log names the profile of each request (signature redacted)
    let logged = serve.events.compactMap { $0["path"] as? String }
    #expect(logged.filter { $0.hasPrefix("/v1/android/a/-/") }.count == 2, "\(logged)")
    #expect(logged.filter { $0.hasPrefix("/v1/a/-/") }.count == 2, "\(logged)")
  }

  @Test(
    "a profile's signature verifies for no other profile; ios has no segment; a video is refused for android")
  func signatureCoversTheProfile() async throws {
    let workspace = try Workspace()
    defer { workspace.remove() }
    let origin = try TestHTTPServer.start()
    defer { origin.stop() }
    origin.serve("/a.gif", body: try Media.bytes("gif-static.gif"), contentType: "image/gif")
    origin.serve("/v.mp4", body: try Media.bytes("mp4-avc1.mp4"), contentType: "video/mp4")
    let serve = try await ServeProcess(workspace: workspace)
    defer { serve.stop() }
    let android = try await sign(["--profile", "android", origin.url("/a.gif")], keyFile: workspace.keyFile)
    let plain = try await sign([origin.url("/a.gif")], keyFile: workspace.keyFile)
    let rest = android.dropFirst("/v1/android".count)  // /a/<signature>/<enc>

    // The android signature moved to ios-compact, to no profile, and an ios signature moved to android
    let moved = try await Curl.get(serve.url("/v1/ios-compact" + rest))
    let dropped = try await Curl.get(serve.url(String(rest).replacingOccurrences(of: "/a/", with: "/v1/a/")))
    let gained = try await Curl.get(serve.url("/v1/android" + plain.dropFirst("/v1".count)))
    let named = try await Curl.get(serve.url("/v1/ios" + plain.dropFirst("/v1".count)))
    for (name, answer) in [("moved", moved), ("dropped", dropped), ("gained", gained)] {
      #expect(answer.status == 403 && answer.errorCode == "bad_signature", "\(name): \(answer.status)")
    }
    #expect(named.status == 400 && named.errorCode == "bad_request", "ios is named by no segment")
    #expect(origin.totalRequests == 0)

    // A sealed path carries its profile in the authenticated data
    let sealed = try await sign(
      ["--profile", "android", "--encrypt", origin.url("/a.gif")], keyFile: workspace.keyFile)
    #expect(sealed.hasPrefix("/v1/android/e/"))
    let opened = try await Curl.get(serve.url(sealed))
    #expect(opened.status == 200)
    #expect(["image/jpeg", "image/png"].contains(opened.header("Content-Type") ?? ""))
    let unsealed = try await Curl.get(serve.url("/v1/ios-compact" + sealed.dropFirst("/v1/android".count)))
    #expect(unsealed.status == 403 && unsealed.errorCode == "bad_encrypted_url")

    // A video for android: refused, naming the profile
    let video = try await Curl.get(
      serve.url(try await sign(["--profile", "android", origin.url("/v.mp4")], keyFile: workspace.keyFile)))
    #expect(video.errorCode == "unsupported_type")
    let message = ((video.json?["error"] as? [String: Any])?["message"] as? String) ?? ""
    #expect(message.hasPrefix("The android profile takes JPEG and PNG only"), "\(message)")
    // and an unknown profile is a usage error of sign
    let unknown = try await Run.process(
      Binaries.attachkit,
      ["sign", "--key-file", workspace.keyFile, "--profile", "windows", origin.url("/a.gif")])
    #expect(unknown.status == 2)
  }
}
