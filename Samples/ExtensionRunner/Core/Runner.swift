import ArgumentParsing
import AttachmentKit
import Foundation

/// Where a run writes: standard output and standard error in the program, buffers in tests.
public struct RunnerOutput: Sendable {
  /// Writes to standard output (the delivered content).
  public var standardOutput: @Sendable (String) -> Void
  /// Writes to standard error (the trace and messages).
  public var standardError: @Sendable (String) -> Void

  /// Makes an output from two writers.
  public init(
    standardOutput: @escaping @Sendable (String) -> Void, standardError: @escaping @Sendable (String) -> Void
  ) {
    self.standardOutput = standardOutput
    self.standardError = standardError
  }
}

/// The exit statuses of `extension-runner`.
public enum RunnerExit {
  /// Content was delivered.
  public static let delivered: Int32 = 0
  /// Unusable arguments.
  public static let usage: Int32 = 2
}

/// One whole run of `extension-runner`: arguments in, content out, exit status back.
public enum RunnerProgram {
  /// Runs with the words after the program name; the budget counts from `start`.
  /// Returns ``RunnerExit/delivered`` whenever content was delivered, ``RunnerExit/usage``
  /// for unusable arguments.
  public static func run(_ words: [String], start: ContinuousClock.Instant, output: RunnerOutput) async
    -> Int32
  {
    let options: RunnerOptions
    do throws(UsageError) {
      switch try RunnerOptions.parse(words) {
      case .help(let text):
        output.standardOutput(text + "\n")
        return RunnerExit.delivered
      case .run(let parsed): options = parsed
      }
    } catch {
      output.standardError(error.description + "\n")
      return RunnerExit.usage
    }
    let payload: NotificationPayload
    let key: DecryptionKey?
    switch prepare(options) {
    case .success(let prepared): (payload, key) = prepared
    case .failure(let problem):
      output.standardError("extension-runner: \(problem.message)\n")
      return RunnerExit.usage
    }
    let fallbackImage: FallbackImage?
    switch readFallbackImage(options) {
    case .success(let image): fallbackImage = image
    case .failure(let problem):
      output.standardError("extension-runner: \(problem.message)\n")
      return RunnerExit.usage
    }
    await deliver(
      payload, key: key, fallbackImage: fallbackImage, options: options, start: start, output: output)
    return RunnerExit.delivered
  }

  /// Why the arguments cannot be used, in one sentence.
  struct Unusable: Error {
    /// The sentence.
    let message: String
  }

  /// The largest payload file read: APNs allows 4 KiB (5 KiB for VoIP); this leaves room for
  /// pretty-printed samples and refuses, say, `/dev/zero`.
  static let largestPayload = 64 * 1024

  /// Reads the payload and the key file.
  static func prepare(_ options: RunnerOptions) -> Result<(NotificationPayload, DecryptionKey?), Unusable> {
    guard let handle = FileHandle(forReadingAtPath: options.payloadPath),
      let data = try? handle.read(upToCount: largestPayload + 1)
    else {
      return .failure(Unusable(message: "cannot read the payload \(options.payloadPath)"))
    }
    try? handle.close()
    guard data.count <= largestPayload else {
      return .failure(Unusable(message: "\(options.payloadPath) is over 64 KiB: not an APNs payload (4 KiB)"))
    }
    let payload: NotificationPayload
    do {
      payload = try NotificationPayload.read(data, baseURL: options.baseURL)
    } catch {
      return .failure(Unusable(message: "\(options.payloadPath): \(error)"))
    }
    guard let keyFile = options.keyFile else { return .success((payload, nil)) }
    do {
      return .success((payload, try DecryptionKey.read(file: keyFile)))
    } catch {
      return .failure(Unusable(message: error.description))
    }
  }

  /// `--fallback-image`: the bundled image, validated once under the limits the runner fetches by;
  /// `nil` without the option. A file that is not an acceptable image attachment is unusable.
  static func readFallbackImage(_ options: RunnerOptions) -> Result<FallbackImage?, Unusable> {
    guard let path = options.fallbackImagePath else { return .success(nil) }
    do {
      return .success(try FallbackImage(path: path, limits: ValidationLimits()))
    } catch {
      let detected = error.detected.map { " (the bytes are \($0))" } ?? ""
      return .failure(
        Unusable(
          message: "--fallback-image \(path) is not an acceptable attachment: "
            + "\(error.code.rawValue): \(error.message)\(detected)"))
    }
  }

  /// Runs the extension under the host and writes the delivery (at once) and the trace (once the
  /// cancelled work has wound down, never later than the budget).
  @discardableResult
  public static func deliver(
    _ payload: NotificationPayload, key: DecryptionKey?, fallbackImage: FallbackImage? = nil,
    options: RunnerOptions,
    start: ContinuousClock.Instant,
    output: RunnerOutput
  ) async -> Delivery {
    let trace = Trace(origin: start)
    var host = ExtensionHost(start: start, budget: options.budget, expireMargin: options.expireMargin)
    host.localization = options.localization
    let mutable = payload.isMutable ? "mutable-content 1" : "no mutable-content"
    trace.note(
      "payload", .ok,
      detail: "\(mutable), category \"\(payload.category)\", \(payload.userInfo.count) top-level keys")
    for problem in payload.problems {
      trace.note("payload field", .failed, detail: problem)
    }
    var pipeline = PipelineConfiguration(cacheDirectory: options.cacheDirectory)
    pipeline.downloader.allowPrivateNetworks = options.allowPrivateNetworks
    pipeline.store = options.store
    if options.rescue {
      pipeline.rescuers = StandardRescuers.make(
        limits: pipeline.limits, media: mediaRescue(options),
        poster: options.poster ? PosterConfiguration() : nil)
      // A video attached without a thumbnail time gets the one AttachmentKit proposes, found
      // before time-will-expire (the fetch's deadline is the end of the budget).
      if options.posterTimeSeconds > 0 {
        var posterTime = PosterTimeConfiguration()
        posterTime.maximumSeconds = options.posterTimeSeconds
        posterTime.deadlineReserveSeconds = options.expireMargin.inSeconds
        pipeline.posterTime = posterTime
      }
    }
    // The copies iOS would take stay only where the caller asked for them; otherwise they go
    // to a directory of this run, removed when it ends (a run leaves nothing in $TMPDIR).
    let runRoot =
      options.keepsAttachments ? nil : AttachmentStaging.runDirectory(under: options.attachmentsDirectory)
    defer { if let runRoot { try? FileManager.default.removeItem(atPath: runRoot) } }
    var configuration = ServiceConfiguration(
      pipeline: pipeline,
      staging: AttachmentStaging(root: runRoot ?? options.attachmentsDirectory), fetchDeadline: host.end)
    configuration.key = key
    configuration.fallbackImage = fallbackImage
    configuration.localization = options.localization
    configuration.maximumConcurrentFetches = options.maximumConcurrentFetches
    configuration.maximumAttachments = options.maximumAttachments
    configuration.locator = AttachmentLocator(keys: options.attachmentKeys)
    let service = NotificationService(configuration: configuration, trace: trace)

    let delivery = await host.deliver(payload, to: service, trace: trace)
    output.standardOutput(delivery.content.json(trace: options.includeTrace ? delivery.trace : nil) + "\n")
    await service.waitUntilIdle(deadline: host.end)
    let delivered = String(format: "%.1f", trace.milliseconds(at: start + delivery.elapsed))
    let idle = String(format: "%.1f", trace.milliseconds())
    output.standardError(
      Trace.render(trace.snapshot) + "\ndelivered at \(delivered) ms by \(delivery.route) "
        + "(budget \(seconds(options.budget)) s, time will expire at "
        + "\(seconds(options.budget - options.expireMargin)) s); done at \(idle) ms\n")
    return delivery
  }

  /// The runner's media rescue: trims by copy and re-wraps whatever the time, a transcode only
  /// when its estimate fits the time left before time-will-expire (the deadline less the
  /// expire margin, and less the poster's time when a poster follows), see
  /// ``MediaTranscodeCost``; else the poster.
  static func mediaRescue(_ options: RunnerOptions) -> MediaRescueConfiguration {
    var media = MediaRescueConfiguration()
    media.transcodeAdmission = .whenEstimateFits(reserve: options.expireMargin)
    return media
  }

  /// A duration as seconds for people: `30`, `2.5`.
  static func seconds(_ duration: Duration) -> String {
    let value = duration.inSeconds
    return value.rounded() == value ? String(Int64(value)) : String(format: "%.3g", value)
  }
}
