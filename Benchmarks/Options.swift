/// The command line: `attachkit-bench [--quick] [--json FILE] [--html FILE] [--server KIND]
/// [--dir DIR] [--only LIST]`, plus the hidden `--memory-probe SCENARIO --base URL --cache DIR` used when
/// the benchmark re-executes itself to measure memory in a fresh process.
struct Options: Sendable {
  /// Fewer iterations and smaller sets, to finish in well under a minute (CI).
  var quick = false
  /// Where to write the JSON object, if anywhere.
  var jsonPath: String?
  /// Where to write the HTML report, if anywhere.
  var htmlPath: String?
  /// `auto` (nginx when installed), `nginx` or `builtin`.
  var server = "auto"
  /// The directory in which the scratch directory (caches, downloads) is made.
  var directory = "/tmp"
  /// Only these scenarios (by name), or all when empty.
  var only: Set<String> = []
  /// Set in a memory child: which scenario it measures.
  var memoryProbe: String?
  /// Set in a memory child: the server's base URL.
  var baseURL: String?
  /// Set in a memory child: its cache directory.
  var cacheDirectory: String?
  /// The `attachkit` binary the command-line batch runs (default: the one built next to the
  /// benchmark), e.g. an older build for a before/after comparison.
  var attachkit: String?

  /// The scenario names `--only` accepts, in running order.
  static let scenarioNames = [
    "hit", "cold", "revalidate", "batch", "churn", "refuse", "deadline", "memory", "scale", "rescue",
  ]

  /// The usage text.
  static let usage = """
    usage: attachkit-bench [--quick] [--json FILE] [--html FILE] [--server auto|nginx|builtin]
                           [--dir DIR] [--only \(scenarioNames.joined(separator: ","))]
                           [--attachkit PATH]
      --quick    fewer iterations (well under a minute)
      --json     write the results as one flat JSON object
      --html     write a self-contained HTML report (inline SVG)
      --server   nginx (default when installed) or the built-in TestHTTPServer
      --dir      where caches and downloads go (default /tmp; the file system matters)
      --only     run only these scenarios
      --attachkit  the attachkit binary for the command-line batch (default: next to this one)
    """

  /// Parses `arguments` (without the program name).
  /// - Throws: ``BenchError`` with the usage on an unknown or incomplete option.
  init(arguments: [String]) throws {
    var rest = arguments[...]
    func value(_ option: String) throws -> String {
      guard let next = rest.popFirst() else { throw BenchError("\(option) needs a value\n\(Self.usage)") }
      return next
    }
    while let argument = rest.popFirst() {
      switch argument {
      case "--quick": quick = true
      case "--json": jsonPath = try value(argument)
      case "--html": htmlPath = try value(argument)
      case "--server":
        server = try value(argument)
        guard ["auto", "nginx", "builtin"].contains(server) else {
          throw BenchError("unknown server \(server)\n\(Self.usage)")
        }
      case "--only":
        only = Set(try value(argument).split(separator: ",").map(String.init))
        if let unknown = only.first(where: { !Self.scenarioNames.contains($0) }) {
          throw BenchError("unknown scenario \(unknown)\n\(Self.usage)")
        }
      case "--dir": directory = try value(argument)
      case "--attachkit": attachkit = try value(argument)
      case "--memory-probe": memoryProbe = try value(argument)
      case "--base": baseURL = try value(argument)
      case "--cache": cacheDirectory = try value(argument)
      case "--help", "-h": throw BenchError(Self.usage)
      default: throw BenchError("unknown argument \(argument)\n\(Self.usage)")
      }
    }
  }

  /// Whether scenario `name` is to run.
  func runs(_ name: String) -> Bool { only.isEmpty || only.contains(name) }
}
