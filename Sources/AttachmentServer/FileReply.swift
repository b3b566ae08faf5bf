import AttachmentKit
import Glibc

/// The conditional and range headers of a request, read on libmicrohttpd's thread.
struct Conditions: Sendable {
  /// `If-None-Match`.
  var ifNoneMatch: String?
  /// `Range`.
  var range: String?
  /// `If-Range`.
  var ifRange: String?
}

/// Turns a validated attachment into its answer: `200`, `206`, `304` or `416`, with the headers
/// a CDN and a Notification Service Extension need, and the body as a slice of the file.
enum FileReply {
  /// The answer for `attachment`, or `nil` when its file cannot be opened (a sweep removed it
  /// meanwhile: ask the pipeline again).
  static func make(
    _ attachment: Attachment, conditions: Conditions, now: Double = HitMemo.now()
  ) -> Reply? {
    let etag = "\"\(attachment.sha256)\""
    var headers: [(String, String)] = [
      ("ETag", etag),
      ("Cache-Control", CacheControlPolicy.header(for: attachment, now: now)),
      ("X-Attachment-Type-Hint", attachment.uti),
      ("X-Attachment-Source", attachment.source.rawValue),
      ("Accept-Ranges", "bytes"),
    ]
    if let lastModified = attachment.lastModified { headers.append(("Last-Modified", lastModified)) }
    if let rescued = attachment.validation.rescued {
      headers.append(("X-Attachment-Rescued", rescued.from))
    }
    if let inm = conditions.ifNoneMatch, matches(inm, etag: etag) {
      return Reply(status: 304, headers: headers, body: .empty, outcome: "not_modified", url: attachment.url)
    }
    guard let (descriptor, size) = openContent(attachment) else { return nil }
    headers.insert(("Content-Type", attachment.validation.mime), at: 0)
    // If-Range with another validator: the client's copy is outdated, send the whole file.
    let rangeHeader = conditions.ifRange.map { $0 == etag } ?? true ? conditions.range : nil
    switch ByteRange(header: rangeHeader, size: size) {
    case .whole:
      return Reply(
        status: 200, headers: headers, body: .file(descriptor: descriptor, offset: 0, length: size),
        outcome: attachment.source.rawValue, url: attachment.url)
    case .partial(let offset, let length):
      headers.append(("Content-Range", "bytes \(offset)-\(offset + length - 1)/\(size)"))
      return Reply(
        status: 206, headers: headers, body: .file(descriptor: descriptor, offset: offset, length: length),
        outcome: attachment.source.rawValue, url: attachment.url)
    case .unsatisfiable:
      _ = Glibc.close(descriptor)
      var reply = Reply.error(
        AttachmentError(.badRequest, "The range is outside the file's \(size) bytes."), url: attachment.url)
      reply.status = 416
      reply.headers.append(("Content-Range", "bytes */\(size)"))
      return reply
    }
  }

  /// Opens the attachment's content file as the cache library does: `O_NOFOLLOW` (a symbolic link
  /// put in its place, to `/etc/passwd` say, is not followed) and `O_NONBLOCK` (a FIFO cannot
  /// stall the event-loop thread that opens it), then `fstat` on the descriptor: only a regular
  /// file of the size the record names is served. Every answer opens the file again this way, a
  /// remembered hit (``HitMemo``) included. `nil` otherwise (the caller asks the pipeline again,
  /// whose lookup refuses the entry as damaged).
  static func openContent(_ attachment: Attachment) -> (descriptor: Int32, size: Int64)? {
    let descriptor = open(attachment.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    var info = stat()
    guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
      Int64(info.st_size) == attachment.bytes
    else {
      _ = Glibc.close(descriptor)
      return nil
    }
    return (descriptor, Int64(info.st_size))
  }

  /// Whether an `If-None-Match` list names `etag` (weak comparison, as RFC 9110 asks) or is `*`.
  static func matches(_ header: String, etag: String) -> Bool {
    header.split(separator: ",").contains { item in
      let tag = item.trimmingPrefix(while: { $0 == " " || $0 == "\t" })
      let trimmed = tag.reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed()
      let value = String(trimmed)
      return value == "*" || value == etag || value == "W/" + etag
    }
  }
}
