import Glibc

extension StoreConfiguration {
  /// A store at `location` (`s3://BUCKET/PREFIX`) configured as the AWS command line reads its
  /// settings: the endpoint from `endpoint`, else `AWS_ENDPOINT_URL_S3`, else
  /// `AWS_ENDPOINT_URL`, else AWS's own for the region; the region from `AWS_REGION`, else
  /// `AWS_DEFAULT_REGION`, else `us-east-1`; the credentials from `AWS_ACCESS_KEY_ID`,
  /// `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`, else from the profile `AWS_PROFILE`
  /// (default `default`) of `AWS_SHARED_CREDENTIALS_FILE` (default `~/.aws/credentials`).
  /// - Parameters:
  ///   - location: `s3://BUCKET/PREFIX`.
  ///   - endpoint: the endpoint given on the command line (`--store-endpoint`), if any.
  ///   - variable: the environment, read by name (`nil`: not set).
  /// - Returns: the configuration, with the library's defaults for the rest.
  /// - Throws: `invalid_configuration` naming the setting: a malformed location or endpoint,
  ///   no credentials anywhere, one of the two keys without the other.
  public static func fromEnvironment(
    location: String, endpoint: String? = nil, variable: (String) -> String?
  ) throws(AttachmentError) -> StoreConfiguration {
    func value(_ name: String) -> String? { variable(name).flatMap { $0.isEmpty ? nil : $0 } }
    let region = value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") ?? "us-east-1"
    let endpoint = endpoint ?? value("AWS_ENDPOINT_URL_S3") ?? value("AWS_ENDPOINT_URL")
    let credentials = try Self.credentials(value)
    return try StoreConfiguration(
      location: location, endpoint: endpoint, region: region, accessKeyID: credentials.id,
      secretAccessKey: credentials.secret, sessionToken: credentials.token)
  }

  private static func credentials(
    _ value: (String) -> String?
  ) throws(AttachmentError) -> (id: String, secret: String, token: String?) {
    switch (value("AWS_ACCESS_KEY_ID"), value("AWS_SECRET_ACCESS_KEY")) {
    case (let id?, let secret?): return (id, secret, value("AWS_SESSION_TOKEN"))
    case (.some, nil), (nil, .some):
      throw AttachmentError(
        .invalidConfiguration,
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together: only one of them is set.")
    case (nil, nil): break
    }
    let home = value("HOME") ?? "/"
    let path = value("AWS_SHARED_CREDENTIALS_FILE") ?? "\(home)/.aws/credentials"
    let profile = value("AWS_PROFILE") ?? "default"
    guard let text = readSmallFile(path) else {
      throw AttachmentError(
        .invalidConfiguration,
        "The store needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile in \(path) (AWS_PROFILE), which cannot be read."
      )
    }
    let section = profileSection(text, named: profile)
    guard let id = section["aws_access_key_id"], let secret = section["aws_secret_access_key"] else {
      throw AttachmentError(
        .invalidConfiguration,
        "The profile [\(profile)] of \(path) (AWS_PROFILE) has no aws_access_key_id and aws_secret_access_key."
      )
    }
    return (id, secret, section["aws_session_token"])
  }

  /// The `key = value` lines of the INI section `[name]` of `text` (keys in lower case).
  static func profileSection(_ text: String, named name: String) -> [String: String] {
    var inSection = false
    var values: [String: String] = [:]
    for raw in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
      let line = raw.trimmingSpaces
      if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
      if line.hasPrefix("["), line.hasSuffix("]") {
        inSection = line.dropFirst().dropLast().trimmingSpaces == name[...]
        continue
      }
      guard inSection, let equals = line.firstIndex(of: "=") else { continue }
      let key = line[..<equals].trimmingSpaces.lowercased()
      values[key] = String(line[line.index(after: equals)...].trimmingSpaces)
    }
    return values
  }

  /// The text of the file at `path` when it is at most 1 MiB and readable, else `nil`.
  private static func readSmallFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16384)
    while bytes.count <= 1 << 20 {
      let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
      if count < 0, errno == EINTR { continue }
      guard count >= 0 else { return nil }
      if count == 0 { return String(decoding: bytes, as: UTF8.self) }
      bytes += chunk[..<count]
    }
    return nil
  }
}

extension Substring {
  /// Without spaces and tabs at either end.
  fileprivate var trimmingSpaces: Substring {
    var text = self
    while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
    while let last = text.last, last == " " || last == "\t" { text.removeLast() }
    return text
  }
}
