import Glibc

/// Where a static route's bytes come from.
enum StaticContent: Sendable {
  /// Bytes held in memory.
  case bytes([UInt8])
  /// A file streamed from disk on every request.
  case file(String)
}

/// A static resource with its validators, answering GET, HEAD and conditional GET.
struct StaticResource: Sendable {
  let content: StaticContent
  let contentType: String?
  let headers: [(String, String)]
  let etag: String?
  let lastModified: String?

  /// Size of the chunks read from disk and written to the socket.
  static let fileChunkSize = 64 * 1024

  /// Answers `request`: 405 for methods other than GET/HEAD, 304 when a validator
  /// matches, otherwise 200 with `Content-Length` (body omitted for HEAD).
  func respond(to request: RecordedRequest, with writer: ResponseWriter) {
    guard request.method == "GET" || request.method == "HEAD" else {
      writer.respond(status: 405, headers: [("Allow", "GET, HEAD")])
      return
    }
    var validators: [(String, String)] = []
    if let etag { validators.append(("ETag", etag)) }
    if let lastModified { validators.append(("Last-Modified", lastModified)) }
    if isNotModified(request) {
      let repeated = headers.filter { !$0.0.lowercased().hasPrefix("content-") }
      writer.writeHead(status: 304, headers: validators + repeated)
      return
    }
    var head: [(String, String)] = []
    if let contentType { head.append(("Content-Type", contentType)) }
    head += validators + headers
    switch content {
    case .bytes(let body):
      writer.writeHead(status: 200, headers: head + [("Content-Length", String(body.count))])
      writer.write(body)
    case .file(let path):
      streamFile(path, head: head, writer: writer)
    }
  }

  /// Whether a matching `If-None-Match` (which takes precedence) or an
  /// `If-Modified-Since` equal to the stored Last-Modified text was sent.
  func isNotModified(_ request: RecordedRequest) -> Bool {
    if let candidates = request.header("If-None-Match") {
      guard let etag else { return false }
      let stored = Self.opaqueTag(etag)
      return candidates.split(separator: ",").contains { candidate in
        let tag = candidate.trimmingASCIIWhitespace()
        return tag == "*" || Self.opaqueTag(tag) == stored
      }
    }
    if let since = request.header("If-Modified-Since"), let lastModified {
      return since.trimmingASCIIWhitespace() == lastModified.trimmingASCIIWhitespace()
    }
    return false
  }

  /// An entity tag without its weakness prefix (weak comparison).
  private static func opaqueTag(_ tag: String) -> Substring {
    tag.hasPrefix("W/") ? tag.dropFirst(2) : Substring(tag)
  }

  private func streamFile(_ path: String, head: [(String, String)], writer: ResponseWriter) {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else {
      ServerCore.notFound(writer.request, writer)
      return
    }
    defer { _ = close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
      ServerCore.notFound(writer.request, writer)
      return
    }
    var remaining = Int(info.st_size)
    guard writer.writeHead(status: 200, headers: head + [("Content-Length", String(remaining))]),
      !writer.isHeadRequest
    else { return }
    var chunk = [UInt8](repeating: 0, count: Self.fileChunkSize)
    while remaining > 0 {
      let wanted = min(remaining, Self.fileChunkSize)
      let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, wanted) }
      if count < 0 && errno == EINTR { continue }
      if count <= 0 { return }  // The file shrank: the short body makes the server close.
      let sent = chunk.withUnsafeBytes {
        writer.writeBody(UnsafeRawBufferPointer(rebasing: $0[0..<count]))
      }
      if !sent { return }
      remaining -= count
    }
  }
}

extension TestHTTPServer {
  /// Serves `body` at `path` for GET and HEAD, with `Content-Length`, the given
  /// `Content-Type` (none when nil), extra `headers`, and validators: a request whose
  /// `If-None-Match` matches `etag`, or whose `If-Modified-Since` equals `lastModified`
  /// exactly, gets `304 Not Modified` with no body and the ETag, Last-Modified and
  /// extra non-`Content-*` headers (e.g. Cache-Control) repeated.
  public func serve(
    _ path: String, body: [UInt8], contentType: String? = "application/octet-stream",
    headers: [(String, String)] = [], etag: String? = nil, lastModified: String? = nil
  ) {
    let resource = StaticResource(
      content: .bytes(body), contentType: contentType, headers: headers, etag: etag,
      lastModified: lastModified)
    route(path) { request, writer in resource.respond(to: request, with: writer) }
  }

  /// Like `serve(_:body:…)`, but streams the file at filesystem path `file` from disk
  /// in 64 KiB chunks on every request (never read whole). A missing file gives 404.
  public func serveFile(
    _ path: String, file: String, contentType: String? = "application/octet-stream",
    headers: [(String, String)] = [], etag: String? = nil, lastModified: String? = nil
  ) {
    let resource = StaticResource(
      content: .file(file), contentType: contentType, headers: headers, etag: etag,
      lastModified: lastModified)
    route(path) { request, writer in resource.respond(to: request, with: writer) }
  }

  /// Serves every file below `directory` at `prefix/NAME` (percent-decoded; `.`, `..`
  /// and empty components rejected with 400, missing files 404), streamed from disk,
  /// with a content type guessed from the extension (else application/octet-stream).
  public func serveDirectory(prefix: String, directory: String) {
    var base = prefix
    while base.hasSuffix("/") { base.removeLast() }
    let mountPoint = base + "/"
    let root = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
    routePrefix(mountPoint) { request, writer in
      guard let relative = Self.safeRelativePath(String(request.path.dropFirst(mountPoint.count)))
      else {
        writer.respond(
          status: 400, headers: [("Content-Type", "text/html")], body: HTTPStatus.htmlPage(400))
        return
      }
      let resource = StaticResource(
        content: .file(root + "/" + relative), contentType: Self.guessContentType(relative),
        headers: [], etag: nil, lastModified: nil)
      resource.respond(to: request, with: writer)
    }
  }

  /// The percent-decoded relative path, or nil if it is empty, contains a `.`, `..` or
  /// empty component, a NUL byte, or a bad escape.
  static func safeRelativePath(_ encoded: String) -> String? {
    guard let decoded = percentDecode(encoded), !decoded.isEmpty, !decoded.contains("\0")
    else { return nil }
    let components = decoded.split(separator: "/", omittingEmptySubsequences: false)
    guard components.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." }) else { return nil }
    return decoded
  }

  /// Decodes `%XX` escapes; nil when an escape is malformed or the result is not UTF-8.
  static func percentDecode(_ text: String) -> String? {
    var bytes: [UInt8] = []
    var iterator = text.utf8.makeIterator()
    while let byte = iterator.next() {
      guard byte == UInt8(ascii: "%") else {
        bytes.append(byte)
        continue
      }
      guard let high = iterator.next(), let low = iterator.next(),
        let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
      else { return nil }
      bytes.append(value)
    }
    return String(validating: bytes, as: UTF8.self)
  }

  /// A MIME type for `name` from its extension, or application/octet-stream.
  static func guessContentType(_ name: String) -> String {
    let lastComponent = name.split(separator: "/").last.map(String.init) ?? name
    guard let dot = lastComponent.lastIndex(of: ".") else { return "application/octet-stream" }
    switch lastComponent[lastComponent.index(after: dot)...].lowercased() {
    case "jpg", "jpeg": return "image/jpeg"
    case "png": return "image/png"
    case "gif": return "image/gif"
    case "webp": return "image/webp"
    case "heic": return "image/heic"
    case "heif": return "image/heif"
    case "avif": return "image/avif"
    case "bmp": return "image/bmp"
    case "tif", "tiff": return "image/tiff"
    case "svg": return "image/svg+xml"
    case "ico": return "image/x-icon"
    case "mp4", "m4v": return "video/mp4"
    case "mov": return "video/quicktime"
    case "webm": return "video/webm"
    case "mp3": return "audio/mpeg"
    case "m4a": return "audio/mp4"
    case "wav": return "audio/wav"
    case "pdf": return "application/pdf"
    case "zip": return "application/zip"
    case "gz": return "application/gzip"
    case "json": return "application/json"
    case "xml": return "application/xml"
    case "txt", "text", "log": return "text/plain"
    case "html", "htm": return "text/html"
    case "css": return "text/css"
    case "js": return "text/javascript"
    case "csv": return "text/csv"
    default: return "application/octet-stream"
    }
  }
}
