import Glibc

/// Where ``PipelineOptions`` reads environment variables from: the process's own
/// (``process``, read with `getenv`, so no Foundation is loaded), or a fixed table (tests, and
/// callers that were handed one).
public struct EnvironmentVariables: Sendable {
  /// The value of a variable, or `nil` when it is not set.
  private let lookUp: @Sendable (String) -> String?

  /// The process's environment, read when asked.
  public static let process = EnvironmentVariables { name in
    getenv(name).map { String(cString: $0) }
  }

  /// A fixed table of variables, by name.
  public init(_ variables: [String: String]) {
    lookUp = { variables[$0] }
  }

  /// Reads variables through `lookUp`.
  private init(lookUp: @escaping @Sendable (String) -> String?) {
    self.lookUp = lookUp
  }

  /// The value of the variable `name`, or `nil` when it is not set.
  public subscript(name: String) -> String? {
    lookUp(name)
  }

  /// Whether the variable `name` is set to `1`, `true` or `yes` (in any case).
  public func isOn(_ name: String) -> Bool {
    guard let value = self[name] else { return false }
    return ["1", "true", "yes"].contains(value.lowercased())
  }
}
