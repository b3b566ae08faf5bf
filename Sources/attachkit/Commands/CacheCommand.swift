import ArgumentParsing
import AttachmentKit
import PipelineOptions

/// `attachkit cache stats|verify|gc|clear|rm`: inspects and maintains the cache.
enum CacheCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    name: "cache",
    abstract: "Inspect and maintain the cache.",
    subcommands: commands.map { $0 })

  /// The group's commands, in the order help lists them: the one list of them.
  static let commands: [any RunnableCommand.Type] = [
    Stats.self, Verify.self, GC.self, Clear.self, Remove.self,
  ]

  static let common: [any ArgumentKey] = [CommonOptions.json, PipelineOptions.cacheDirectory]

  enum Stats: RunnableCommand {
    static let configuration = CommandConfiguration(
      name: "stats", abstract: "Count entries, content files and bytes.",
      sections: [CommonOptions.cacheExitCodes])
    static let arguments = CacheCommand.common
    static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart {
      .finished(CacheCommand.perform(arguments) { cache throws(AttachmentError) in try cache.stats() })
    }
  }

  enum Verify: RunnableCommand {
    static let configuration = CommandConfiguration(
      name: "verify",
      abstract: "Re-hash every entry; remove damaged ones, orphans and abandoned temporary files.",
      sections: [CommonOptions.cacheExitCodes])
    static let arguments = CacheCommand.common
    static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart {
      .finished(CacheCommand.perform(arguments) { cache throws(AttachmentError) in try cache.verify() })
    }
  }

  enum GC: RunnableCommand {
    static let configuration = CommandConfiguration(
      name: "gc",
      abstract: "Evict least recently used entries down to the low watermark when over the size limit.",
      sections: [CommonOptions.cacheExitCodes])
    static let maximumBytes = OptionKey<Int64>.byteCount(
      long: "max-cache-bytes", valueName: "BYTES", bound: .positive,
      help: "The size limit for this run (default: $ATTACHKIT_MAX_CACHE_BYTES, else 512MiB)."
    ).aliased("max-bytes")
    static let arguments = CacheCommand.common + [maximumBytes]
    static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart {
      var limit = try arguments[maximumBytes]
      if limit == nil { limit = try PipelineOptions.environmentCacheBytes(for: arguments) }
      return .finished(
        CacheCommand.perform(arguments) { cache throws(AttachmentError) in
          try cache.collectGarbage(maximumBytes: limit)
        })
    }
  }

  enum Clear: RunnableCommand {
    static let configuration = CommandConfiguration(
      name: "clear", abstract: "Remove every entry and all content.", sections: [CommonOptions.cacheExitCodes]
    )
    static let arguments = CacheCommand.common
    static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart {
      .finished(CacheCommand.perform(arguments) { cache throws(AttachmentError) in try cache.clear() })
    }
  }

  enum Remove: RunnableCommand {
    static let configuration = CommandConfiguration(
      name: "rm",
      abstract: "Remove the entries of these URLs (content another entry uses stays).",
      discussion: """
        For an asset replaced at its URL: the next request fetches it again. Each URL is keyed as \
        fetch keys it, so give the same --cache-key-ignore rules. Safe while other processes use the cache. \
        An entry another URL fetched, in parameters the rules leave out (a presigned URL's signature), \
        is kept and reported 'unconfirmed' (a forged signature must not purge another caller's entry): \
        give the URL it was fetched with, or --force.
        """,
      examples: ["attachkit cache rm https://cdn.example.com/push/123.jpg"],
      sections: [CommonOptions.cacheExitCodes])
    static let urls = PositionalKey<[String]>.repeating(
      name: "urls", valueName: "URL", help: "The URLs whose entries go.")
    static let force = FlagKey(
      long: "force",
      help: "Remove an entry even when another URL fetched it, in parameters --cache-key-ignore leaves out.")
    static let arguments = CacheCommand.common + [PipelineOptions.cacheKeyIgnore, force, urls]

    static func start(_ arguments: ParsedArguments) throws(UsageError) -> CommandStart {
      let texts = arguments[urls]
      guard !texts.isEmpty else { throw arguments.usageError("cache rm needs at least one URL") }
      var checked: [AttachmentURL] = []
      for text in texts {
        do {
          checked.append(try AttachmentURL(text))
        } catch {
          throw arguments.usageError(error.message)
        }
      }
      var configuration = CacheConfiguration(directory: PipelineOptions.cacheDirectory(from: arguments))
      configuration.keyRules = try PipelineOptions.cacheKeyRules(from: arguments)
      let removal: CacheRemoval
      do {
        removal = try AttachmentCache(configuration: configuration).removeEntries(
          for: checked, force: arguments[force])
      } catch {
        Terminal.error("attachkit: \(Terminal.safe(error.message))\n")
        return .finished(.cacheUnusable)
      }
      if arguments[CommonOptions.json] {
        for (url, outcome) in removal.outcomes {
          var object = JSONObject()
          object.set("url", Terminal.safe(url.redacted))
          object.set("outcome", outcome.rawValue)
          Terminal.out(object.value.text + "\n")
        }
      } else {
        for (url, outcome) in removal.outcomes {
          let said =
            switch outcome {
            case .removed: "removed   "
            case .notCached: "not cached"
            case .unconfirmed: "kept (fetched with another URL; --force removes it)"
            }
          Terminal.out("\(said) \(Terminal.safe(url.redacted))\n")
        }
        Terminal.out(
          "\(removal.contentFilesRemoved) content files removed (\(Table.bytes(removal.bytesRemoved)))\n")
      }
      return .finished(.success)
    }
  }

  /// Opens the cache, runs one maintenance call and prints its report.
  static func perform(
    _ arguments: ParsedArguments, _ body: (AttachmentCache) throws(AttachmentError) -> CacheReport
  ) -> ExitCode {
    let directory = PipelineOptions.cacheDirectory(from: arguments)
    let report: CacheReport
    do {
      let cache = try AttachmentCache(configuration: CacheConfiguration(directory: directory))
      report = try body(cache)
    } catch {
      Terminal.error("attachkit: \(Terminal.safe(error.message))\n")
      return .cacheUnusable
    }
    if arguments[CommonOptions.json] {
      var object = JSONObject()
      object.set("directory", Terminal.safe(directory))
      object.set("entries", report.entries)
      object.set("bytes", report.bytes)
      object.set("contentFiles", report.contentFiles)
      object.set("corrupt", report.corrupt)
      object.set("removed", report.removed)
      object.set("evicted", report.evicted)
      object.set("temporaryFiles", report.temporaryFiles)
      Terminal.out(object.value.text + "\n")
    } else {
      Terminal.out(
        """
        cache \(Terminal.safe(directory))
          entries        \(report.entries)
          content files  \(report.contentFiles) (\(Table.bytes(report.bytes)))
          corrupt        \(report.corrupt)
          removed        \(report.removed)\(report.evicted > 0 ? " (\(report.evicted) evicted)" : "")
          temporary      \(report.temporaryFiles)

        """)
    }
    return .success
  }
}
