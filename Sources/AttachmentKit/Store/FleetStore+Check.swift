/// The check a face runs at start: one small object written and read back under the prefix,
/// so that wrong credentials, a missing bucket or an endpoint that cannot be reached are one
/// clear error at start rather than a failure (or a slow miss) of every request.
extension FleetStore {
  /// The name of the object the check writes.
  static let checkName = ".attachkit-check"

  /// Writes and reads back the check object within `timeout`.
  /// - Throws: `store_unavailable` naming the setting to fix.
  func check(timeout: Duration) throws(AttachmentError) {
    let key = configuration.key(Self.checkName)
    let body = Array("attachkit store check\n".utf8)
    let written = client.put(key, body: body, ifAbsent: false, timeout: timeout)
    if let problem = problem(written) { throw AttachmentError(.storeUnavailable, problem) }
    let read = client.get(key, maximumBytes: 4096, timeout: timeout)
    if let problem = problem(read) { throw AttachmentError(.storeUnavailable, problem) }
    guard read.body == body else {
      throw AttachmentError(
        .storeUnavailable,
        "The store \(configuration.location) did not give back the check object it was given.")
    }
  }

  /// What `response` says is wrong with the configuration, naming the setting; `nil` for a
  /// `200`.
  private func problem(_ response: StoreResponse) -> String? {
    let location = configuration.location
    let endpoint = configuration.endpoint
    if response.status == 200, response.failure == nil { return nil }
    guard response.status != 0 else {
      return
        "The store endpoint \(endpoint) (--store-endpoint, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL) cannot be reached: \(response.failure ?? "no answer")."
    }
    let code = response.errorCode ?? "no error code"
    switch code {
    case "NoSuchBucket":
      return
        "The bucket '\(configuration.bucket)' of --store \(location) (ATTACHKIT_STORE) does not exist at \(endpoint)."
    case "SignatureDoesNotMatch", "InvalidAccessKeyId", "InvalidToken", "ExpiredToken", "InvalidSecurity":
      return
        "The store \(location) refused the credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, or the AWS_PROFILE profile): \(code)."
    case "AccessDenied":
      return
        "The store \(location) denied writing and reading under its prefix with these credentials (AWS_ACCESS_KEY_ID, AWS_PROFILE): grant s3:GetObject and s3:PutObject on it."
    case "AuthorizationHeaderMalformed", "AuthorizationQueryParametersError":
      return
        "The store \(location) refused the signature's region '\(configuration.region)' (AWS_REGION): \(code)."
    default:
      return "The store \(location) at \(endpoint) answered \(response.status) (\(code)) to its check."
    }
  }
}
