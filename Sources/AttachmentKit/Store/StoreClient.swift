import CCurl
import Glibc

/// One answer of the store: the status and body, or why no answer came (the store's
/// connection failed or timed out; `status` is then 0).
struct StoreResponse: Sendable {
  /// The HTTP status (0: no answer).
  var status = 0
  /// The body, up to the request's limit.
  var body: [UInt8] = []
  /// Why there is no (whole) answer: libcurl's failure, the time limit, a body over the limit.
  var failure: String?

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
/// `x-amz-security-token`): no hand-written cryptography. Each request is one easy handle run
/// with `curl_easy_perform` on the calling thread, which is never the cooperative pool (the
/// pipeline runs store reads through ``OffPoolWork`` and writes on a queue of their own).
///
/// The store's endpoint is the operator's own configuration, so the private-network guard of
/// origin fetches does not apply to it (a store on a private network is the common case); no
/// redirect is followed, so no request reaches anything but the configured endpoint.
struct StoreClient: Sendable {
  let configuration: StoreConfiguration

  /// `GET` of the object `key`, whose body may be at most `maximumBytes`, within `timeout`.
  func get(_ key: String, maximumBytes: Int, timeout: Duration) -> StoreResponse {
    perform(method: "GET", key: key, body: nil, headers: [], maximumBytes: maximumBytes, timeout: timeout)
  }

  /// `PUT` of `body` as the object `key` within `timeout`; `ifAbsent` sends `If-None-Match: *`,
  /// so an existing object is kept (`412`).
  func put(_ key: String, body: [UInt8], ifAbsent: Bool, timeout: Duration) -> StoreResponse {
    perform(
      method: "PUT", key: key, body: body, headers: ifAbsent ? ["If-None-Match: *"] : [],
      maximumBytes: 1 << 16, timeout: timeout)
  }

  private func perform(
    method: String, key: String, body: [UInt8]?, headers: [String], maximumBytes: Int, timeout: Duration
  ) -> StoreResponse {
    guard LibcurlGlobal.initializeOnce(), let easy = curl_easy_init() else {
      return StoreResponse(failure: "libcurl is not available")
    }
    defer { curl_easy_cleanup(easy) }
    let sink = StoreSink(limit: maximumBytes)
    let context = Unmanaged.passRetained(sink)
    defer { context.release() }
    var list: UnsafeMutablePointer<curl_slist>?
    defer { curl_slist_free_all(list) }
    // No empty header lines that remove one of libcurl's (`Expect:`): 7.88 signs them as they are, and
    // the store then finds another signature.
    var lines = ["x-amz-content-sha256: UNSIGNED-PAYLOAD"] + headers
    if let token = configuration.sessionToken { lines.append("x-amz-security-token: \(token)") }
    if body != nil { lines.append("Content-Type: application/octet-stream") }
    for line in lines where !line.contains("\r") && !line.contains("\n") {
      list = curl_slist_append(list, line)
    }
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
    set(ak_easy_setopt_slist(easy, CURLOPT_HTTPHEADER, list))
    set(ak_easy_setopt_data_callback(easy, CURLOPT_WRITEFUNCTION, storeWriteCallback))
    set(ak_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, context.toOpaque()))
    set(ak_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, method))
    guard refused.isEmpty else {
      return StoreResponse(failure: "libcurl refused an option: \(curlErrorText(refused[0]))")
    }
    let code: CURLcode =
      body.map { bytes in
        bytes.withUnsafeBytes { buffer in
          _ = ak_easy_setopt_long(easy, CURLOPT_POSTFIELDSIZE, buffer.count)
          _ = ak_easy_setopt_pointer(
            easy, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: buffer.baseAddress))
          return curl_easy_perform(easy)
        }
      } ?? curl_easy_perform(easy)
    var status = 0
    _ = ak_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
    if sink.overflowed {
      return StoreResponse(status: status, failure: "the object is over \(maximumBytes) bytes")
    }
    guard code == CURLE_OK else { return StoreResponse(status: 0, failure: curlErrorText(code)) }
    return StoreResponse(status: status, body: sink.bytes)
  }
}

/// The body of one store request as it arrives, up to a limit.
private final class StoreSink {
  let limit: Int
  var bytes: [UInt8] = []
  var overflowed = false

  init(limit: Int) { self.limit = limit }
}

/// libcurl's write callback of store requests: appends to the ``StoreSink``; 0 (stop) past its
/// limit. Non-capturing, so it converts to a C function pointer; it never throws.
private func storeWriteCallback(
  _ pointer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ context: UnsafeMutableRawPointer?
) -> Int {
  guard let context else { return 0 }
  let sink = Unmanaged<StoreSink>.fromOpaque(context).takeUnretainedValue()
  let length = size * count
  guard length > 0, let pointer else { return length }
  guard sink.bytes.count + length <= sink.limit else {
    sink.overflowed = true
    return 0
  }
  sink.bytes.append(contentsOf: UnsafeRawBufferPointer(start: pointer, count: length))
  return length
}
