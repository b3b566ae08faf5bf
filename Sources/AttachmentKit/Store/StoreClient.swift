import CCurl
import Glibc

/// One answer of the store: the status and body, or why no answer came (the store's
/// connection failed or timed out; `status` is then 0).
struct StoreResponse: Sendable {
  /// The HTTP status (0: no answer).
  var status = 0
  /// The body, up to the request's limit; of a download into a file, only its first 4 KiB (what
  /// an error's `<Code>` is read from: the whole body went to the file).
  var body: [UInt8] = []
  /// The bytes of the body received (of a download into a file: written to it).
  var bytesReceived: Int64 = 0
  /// The SHA-256 (hex) of the whole body, for a download into a file; `nil` otherwise, or when
  /// libcrypto failed.
  var sha256: String?
  /// Why there is no (whole) answer: libcurl's failure, the time limit, a body over the limit.
  var failure: String?
  /// The connections libcurl opened for the request (`CURLINFO_NUM_CONNECTS`): 0 when it reused
  /// one a kept handle held (``StoreHandles``).
  var connectionsOpened = 0

  /// The `<Code>` of an S3 error body (`NoSuchBucket`, `SignatureDoesNotMatch`, …), if any.
  var errorCode: String? {
    let bytes = Array(body.prefix(4096))
    let open = Array("<Code>".utf8)
    guard let start = Self.find(open, in: bytes, from: 0).map({ $0 + open.count }),
      let end = Self.find(Array("</Code>".utf8), in: bytes, from: start)
    else { return nil }
    return String(decoding: bytes[start..<end], as: UTF8.self)
  }

  /// The first index of `needle` in `bytes` at or after `from`.
  private static func find(_ needle: [UInt8], in bytes: [UInt8], from: Int) -> Int? {
    guard !needle.isEmpty, bytes.count >= needle.count, from <= bytes.count - needle.count else { return nil }
    return (from...(bytes.count - needle.count)).first {
      bytes[$0..<($0 + needle.count)].elementsEqual(needle)
    }
  }
}

/// Requests to an S3-compatible store over libcurl, signed by libcurl's own AWS Signature
/// Version 4 (`CURLOPT_AWS_SIGV4`, the keys as `CURLOPT_USERPWD`, a session token as
/// `x-amz-security-token`): no hand-written cryptography. Each request runs an easy handle with
/// `curl_easy_perform` on the calling thread, which is never the cooperative pool (the pipeline
/// runs store reads through ``OffPoolWork`` and writes on a queue of their own); the handles are
/// kept between requests (``StoreHandles``), and with them their connections to the store.
///
/// The store's endpoint is the operator's own configuration, so the private-network guard of
/// origin fetches does not apply to it (a store on a private network is the common case); no
/// redirect is followed, so no request reaches anything but the configured endpoint.
struct StoreClient: Sendable {
  /// The store, the bucket and the keys.
  let configuration: StoreConfiguration
  /// The idle easy handles, with their connections.
  let handles = StoreHandles()

  init(configuration: StoreConfiguration) {
    self.configuration = configuration
  }

  /// What a `PUT` sends: bytes in memory (records, leases), or a file read as it is sent
  /// (content objects: never held in memory whole).
  enum Upload {
    case bytes([UInt8])
    case file(descriptor: Int32, length: Int64)
  }

  /// `GET` of object `key` into memory; a body over `maximumBytes` is a failure.
  func get(_ key: String, maximumBytes: Int, timeout: Duration) -> StoreResponse {
    perform(
      method: "GET", key: key, upload: nil, headers: [],
      sink: StoreSink(limit: Int64(maximumBytes), keep: maximumBytes, descriptor: -1), timeout: timeout)
  }

  /// `GET` of object `key` streamed into `descriptor` (at its current offset) in constant
  /// memory, hashed as it arrives (``StoreResponse/sha256``); a body over `maximumBytes` is a
  /// failure. A refusal's body is written too: the caller discards the file unless the status
  /// is 200.
  func download(_ key: String, into descriptor: Int32, maximumBytes: Int64, timeout: Duration)
    -> StoreResponse
  {
    perform(
      method: "GET", key: key, upload: nil, headers: [],
      sink: StoreSink(limit: maximumBytes, keep: 4096, descriptor: descriptor), timeout: timeout)
  }

  /// `PUT` of object `key` with `body`; `ifAbsent` sends `If-None-Match: *` (412 when the key
  /// exists).
  func put(_ key: String, body: [UInt8], ifAbsent: Bool, timeout: Duration) -> StoreResponse {
    put(key, upload: .bytes(body), ifAbsent: ifAbsent, timeout: timeout)
  }

  /// `PUT` of object `key` with `upload`; `ifAbsent` sends `If-None-Match: *`.
  func put(_ key: String, upload: Upload, ifAbsent: Bool, timeout: Duration) -> StoreResponse {
    perform(
      method: "PUT", key: key, upload: upload, headers: ifAbsent ? ["If-None-Match: *"] : [],
      sink: StoreSink(limit: 1 << 16, keep: 1 << 16, descriptor: -1), timeout: timeout)
  }

  private func perform(
    method: String, key: String, upload: Upload?, headers: [String], sink: StoreSink, timeout: Duration
  ) -> StoreResponse {
    guard LibcurlGlobal.initializeOnce(), let easy = handles.take() else {
      return StoreResponse(failure: "libcurl is not available")
    }
    defer { handles.give(easy) }
    let context = Unmanaged.passRetained(sink)
    defer { context.release() }
    var list: UnsafeMutablePointer<curl_slist>?
    defer { curl_slist_free_all(list) }
    // No empty header lines that remove one of libcurl's (`Expect:`): 7.88 signs them as they are, and
    // the store then finds another signature.
    var lines = ["x-amz-content-sha256: UNSIGNED-PAYLOAD"] + headers
    if let token = configuration.sessionToken { lines.append("x-amz-security-token: \(token)") }
    if upload != nil { lines.append("Content-Type: application/octet-stream") }
    for line in lines where !line.contains("\r") && !line.contains("\n") {
      list = curl_slist_append(list, line)
    }
    var refused = options(easy, key: key, headers: list, timeout: timeout)
    func set(_ code: CURLcode) { if code != CURLE_OK { refused.append(code) } }
    set(ak_easy_setopt_data_callback(easy, CURLOPT_WRITEFUNCTION, storeWriteCallback))
    set(ak_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, context.toOpaque()))
    set(ak_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method))
    guard refused.isEmpty else {
      return StoreResponse(failure: "libcurl refused an option: \(curlErrorText(refused[0]))")
    }
    let code = send(easy, upload: upload)
    var status = 0
    _ = ak_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
    if sink.overflowed {
      return StoreResponse(status: status, failure: "the object is over \(sink.limit) bytes")
    }
    if sink.writeFailed { return StoreResponse(status: 0, failure: "the local file could not be written") }
    guard code == CURLE_OK else { return StoreResponse(status: 0, failure: curlErrorText(code)) }
    var connects = 0
    _ = ak_easy_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects)
    return StoreResponse(
      status: status, body: sink.kept, bytesReceived: sink.received,
      sha256: sink.hasher?.finalize(), connectionsOpened: connects)
  }

  /// The options every request has: the object's URL, no signals, http(s) only, no redirects
  /// and no proxy, the time limit, TLS verified, the signature, the headers.
  /// - Returns: the codes of the options libcurl refused (none, normally).
  private func options(
    _ easy: UnsafeMutableRawPointer, key: String, headers: UnsafeMutablePointer<curl_slist>?,
    timeout: Duration
  ) -> [CURLcode] {
    let milliseconds = max(1, Int(clamping: timeout.millisecondsRoundedUp))
    var refused = [CURLcode]()
    func set(_ code: CURLcode) { if code != CURLE_OK { refused.append(code) } }
    set(ak_easy_setopt_string(easy, CURLOPT_URL, configuration.url(ofObject: key)))
    set(ak_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
    set(ak_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"))
    set(ak_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0))
    set(ak_easy_setopt_string(easy, CURLOPT_PROXY, ""))
    set(ak_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, milliseconds))
    set(ak_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, milliseconds))
    set(ak_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 1))
    set(ak_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 2))
    set(ak_easy_setopt_string(easy, CURLOPT_AWS_SIGV4, "aws:amz:\(configuration.region):s3"))
    set(
      ak_easy_setopt_string(
        easy, CURLOPT_USERPWD, "\(configuration.accessKeyID):\(configuration.secretAccessKey)"))
    set(ak_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, headers))
    return refused
  }

  /// Runs the request, sending `upload` when there is one: bytes as the request's fields, a
  /// file through the read callback (``StoreSource``), `length` bytes from its start.
  private func send(_ easy: UnsafeMutableRawPointer, upload: Upload?) -> CURLcode {
    switch upload {
    case nil:
      return curl_easy_perform(easy)
    case .bytes(let bytes):
      return bytes.withUnsafeBytes { buffer in
        _ = ak_easy_setopt_long(easy, CURLOPT_POSTFIELDSIZE, buffer.count)
        _ = ak_easy_setopt_pointer(
          easy, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: buffer.baseAddress))
        return curl_easy_perform(easy)
      }
    case .file(let descriptor, let length):
      let source = Unmanaged.passRetained(StoreSource(descriptor: descriptor, length: length))
      defer { source.release() }
      guard ak_easy_setopt_long(easy, CURLOPT_UPLOAD, 1) == CURLE_OK,
        ak_easy_setopt_long(easy, CURLOPT_INFILESIZE_LARGE, Int(length)) == CURLE_OK,
        ak_easy_setopt_data_callback(easy, CURLOPT_READFUNCTION, storeReadCallback) == CURLE_OK,
        ak_easy_setopt_pointer(easy, CURLOPT_READDATA, source.toOpaque()) == CURLE_OK
      else { return CURLE_FAILED_INIT }
      return curl_easy_perform(easy)
    }
  }
}

/// Where a response's body goes: memory (up to `keep` bytes kept), and a file when
/// `descriptor` is one (every byte, hashed as written). Used by one request on one thread.
private final class StoreSink {
  /// The most body bytes accepted; past it the transfer stops (``overflowed``).
  let limit: Int64
  /// How many of the first bytes are kept in memory.
  let keep: Int
  /// The file the body is written to, or -1.
  let descriptor: Int32
  /// The body's SHA-256 so far, when it goes to a file.
  let hasher: SHA256Hasher?
  var kept: [UInt8] = []
  var received: Int64 = 0
  var overflowed = false
  var writeFailed = false

  init(limit: Int64, keep: Int, descriptor: Int32) {
    self.limit = limit
    self.keep = keep
    self.descriptor = descriptor
    hasher = descriptor >= 0 ? SHA256Hasher() : nil
  }

  /// Takes one piece of the body; `false` stops the transfer (over the limit, a failed write).
  func take(_ piece: UnsafeRawBufferPointer) -> Bool {
    guard received + Int64(piece.count) <= limit else {
      overflowed = true
      return false
    }
    received += Int64(piece.count)
    if kept.count < keep { kept.append(contentsOf: piece.prefix(keep - kept.count)) }
    guard descriptor >= 0 else { return true }
    hasher?.update(piece)
    var offset = 0
    while offset < piece.count, let base = piece.baseAddress {
      let count = Glibc.write(descriptor, base + offset, piece.count - offset)
      if count < 0, errno == EINTR { continue }
      guard count > 0 else {
        writeFailed = true
        return false
      }
      offset += count
    }
    return true
  }
}

/// A file sent as a request's body: `length` bytes read from its start as libcurl asks.
private final class StoreSource {
  let descriptor: Int32
  let length: Int64
  var offset: Int64 = 0

  init(descriptor: Int32, length: Int64) {
    self.descriptor = descriptor
    self.length = length
  }
}

/// libcurl's write callback: hands each piece to the ``StoreSink``; never throws.
private func storeWriteCallback(
  _ pointer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
  guard let context else { return 0 }
  let sink = Unmanaged<StoreSink>.fromOpaque(context).takeUnretainedValue()
  let length = size * count
  guard length > 0, let pointer else { return length }
  return sink.take(UnsafeRawBufferPointer(start: pointer, count: length)) ? length : 0
}

/// libcurl's read callback: the next piece of the ``StoreSource``'s file (`pread`, so the
/// descriptor's offset is left alone); 0 at its end; `CURL_READFUNC_ABORT` when the file cannot
/// be read or ends early (the request then fails, and the write is retried or dropped).
private func storeReadCallback(
  _ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
  guard let context, let buffer else { return Int(CURL_READFUNC_ABORT) }
  let source = Unmanaged<StoreSource>.fromOpaque(context).takeUnretainedValue()
  let wanted = min(Int64(size * count), source.length - source.offset)
  guard wanted > 0 else { return 0 }
  while true {
    let read = pread(source.descriptor, buffer, Int(wanted), off_t(source.offset))
    if read < 0, errno == EINTR { continue }
    guard read > 0 else { return Int(CURL_READFUNC_ABORT) }
    source.offset += Int64(read)
    return read
  }
}
