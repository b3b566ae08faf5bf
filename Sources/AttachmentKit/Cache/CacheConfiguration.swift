import Glibc

/// How the on-disk cache behaves.
public struct CacheConfiguration: Sendable, Equatable {
  /// The cache directory. Default: `$ATTACHKIT_CACHE_DIR`, else `$XDG_CACHE_HOME/attachkit`,
  /// else `~/.cache/attachkit` (see ``defaultDirectory()``).
  public var directory: String

  /// The size the cache may grow to (the high watermark), in bytes. Default: 512 MiB.
  public var maximumBytes: Int64 = 512 * 1024 * 1024

  /// The fraction of ``maximumBytes`` a sweep brings the cache down to (the low watermark).
  /// Default: 0.8.
  public var lowWatermark: Double = 0.8

  /// After how many written bytes a sweep runs by itself, in bytes. Default: the gap between
  /// the watermarks, ``maximumBytes`` × (1 − ``lowWatermark``) (a fifth of the limit): a sweep
  /// leaves the cache at the low watermark, so an earlier one would find it under the limit
  /// and evict nothing (measured: with a tenth, half of the churn benchmark's sweeps were
  /// scans that removed nothing).
  public var sweepAfterBytes: Int64? = nil

  /// Whether the automatic sweep runs on a background task (`true`) or inline, in the call
  /// whose publish crossed ``sweepAfterBytes`` (a short-lived process, such as the command
  /// line, would otherwise exit before its sweep ran). Default: `true`.
  public var sweepsInBackground = true

  /// How long new content is safe from garbage collection even when no record points at it
  /// yet (a writer in another process may be about to commit one), in seconds. Default: 300.
  public var gracePeriodSeconds: Double = 300

  /// Whether content files, records and their directories are fsynced before they count as
  /// published (survives power loss, costs a few milliseconds per write). Default: `false`.
  public var durable = false

  /// How long a response without any freshness information (no `Cache-Control`, `Expires` or
  /// `Last-Modified`) stays fresh, in seconds. Default: 3,600.
  public var defaultFreshnessSeconds: Double = 3_600

  /// Whether the cache is shared between users (RFC 9111 §3), as a proxy's is: it then keeps
  /// no response the origin marked `private` (the one who asked still gets it) and takes a
  /// response's lifetime from `s-maxage` before `max-age`. `attachkit serve` sets it; a device's
  /// cache and one command's are private. Default: `false`.
  public var isShared = false

  /// Query parameters left out of a URL's cache key, never out of its request: presigned URLs
  /// of one object then share one entry (see ``CacheKeyRules`` for when that is safe). The
  /// record keeps the last URL its content was fetched with. Default: ``CacheKeyRules/none``.
  public var keyRules = CacheKeyRules.none

  /// Whether bodies in flight are anonymous `O_TMPFILE` files (where the file system has
  /// them). `false` forces the named, locked fallback; for tests of that path. Default: `true`.
  var anonymousBodyFiles = true

  /// How many file operations a sweep does per hold of the lock before letting publishes
  /// and record writes through. Default: 64.
  var sweepSliceOperations = 64

  /// How many records garbage collection remembers between scans, so it re-reads only the
  /// changed ones (see ``RecordScanMemory``). Default: 8,192 (a few MiB at most).
  var rememberedRecords = 8_192

  /// How many decoded records a cache object keeps with their bytes for its hits (see
  /// ``DecodedRecords``). Default: 1,024 (about a megabyte at most).
  var decodedRecords = 1_024

  /// Makes a configuration for a cache in `directory`.
  public init(directory: String) {
    self.directory = directory
  }

  /// The default cache directory from the environment: `$ATTACHKIT_CACHE_DIR`, else
  /// `$XDG_CACHE_HOME/attachkit`, else `$HOME/.cache/attachkit`, else `/tmp/attachkit-UID`.
  public static func defaultDirectory() -> String {
    if let explicit = Environment.value("ATTACHKIT_CACHE_DIR"), !explicit.isEmpty { return explicit }
    if let xdg = Environment.value("XDG_CACHE_HOME"), !xdg.isEmpty { return xdg + "/attachkit" }
    if let home = Environment.value("HOME"), !home.isEmpty { return home + "/.cache/attachkit" }
    return "/tmp/attachkit-\(Environment.userID)"
  }

  var sweepThreshold: Int64 {
    sweepAfterBytes ?? max(1, Int64(Double(maximumBytes) * max(0.01, 1 - lowWatermark)))
  }
}

/// Environment variables without Foundation.
enum Environment {
  /// The value of an environment variable, or `nil`.
  static func value(_ name: String) -> String? {
    guard let pointer = getenv(name) else { return nil }
    return String(cString: pointer)
  }

  /// The real user id.
  static var userID: UInt32 { getuid() }
}
