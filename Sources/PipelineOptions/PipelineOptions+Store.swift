import ArgumentParsing
import AttachmentKit

/// The options of the object store behind the cache (issue 55): `--store` and
/// `--store-endpoint`, with the AWS command line's variables.
extension PipelineOptions {
  /// `--store s3://BUCKET/PREFIX`: an S3-compatible object store as the cache's second tier.
  public static let store = OptionKey<String>.option(
    long: "store", valueName: "s3://BUCKET/PREFIX",
    help:
      "Share fetched, checked and rescued files with a fleet through an S3-compatible object store: a local miss looks there before the origin (within a quarter of the time left, at most 3 s), and what the origin gave is written there in the background (also $ATTACHKIT_STORE). Credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN or the AWS_PROFILE profile of ~/.aws/credentials; region from AWS_REGION or AWS_DEFAULT_REGION. Checked at start: exit 2 when it cannot be used."
  )
  /// `--store-endpoint URL`: the object store's endpoint.
  public static let storeEndpoint = OptionKey<String>.option(
    long: "store-endpoint", valueName: "URL",
    help:
      "The object store's endpoint, http(s)://HOST[:PORT], addressed path-style (default: $AWS_ENDPOINT_URL_S3, else $AWS_ENDPOINT_URL, else AWS S3 of the region, virtual-hosted)."
  )
  /// The object store of `--store` (else `$ATTACHKIT_STORE`), with `--store-endpoint` and the
  /// AWS variables (``AttachmentKit/StoreConfiguration/fromEnvironment(location:endpoint:variable:)``);
  /// `nil` when neither is given.
  /// - Throws: ``ArgumentParsing/UsageError`` naming the setting: a malformed location or
  ///   endpoint, missing credentials, `--store-endpoint` without a store.
  public static func storeConfiguration(
    from arguments: ParsedArguments, environment: EnvironmentVariables = .process
  ) throws(UsageError) -> StoreConfiguration? {
    let endpoint = arguments[storeEndpoint]
    guard let location = arguments[store] ?? environment["ATTACHKIT_STORE"].flatMap({ $0.isEmpty ? nil : $0 })
    else {
      if endpoint != nil {
        throw arguments.usageError("--store-endpoint is the endpoint of --store: add --store")
      }
      return nil
    }
    do {
      return try StoreConfiguration.fromEnvironment(location: location, endpoint: endpoint) {
        environment[$0]
      }
    } catch {
      throw arguments.usageError("--store: \(error.message)")
    }
  }
}
