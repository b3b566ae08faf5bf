/// Judges the streams of an audio or video file against ``CodecTable``: a file is refused
/// (`unsupported_codec`) when none of the streams of its category decodes (for a movie without
/// a video track, none of its audio tracks), and accepted with a
/// warning for every stream that only some devices decode or that iOS does not decode but is
/// not the one that plays (a second video track, the audio of a video, a subtitle track).
enum CodecCheck {
  /// The warnings for a file of `type` whose streams are `streams`, or the refusal. Files
  /// whose probes name no stream of their category (images, an MPEG video stream without a
  /// recognisable header) pass without a warning.
  static func judge(_ streams: [MediaStream], type: MediaType) -> Result<[String], AttachmentError> {
    let primary: MediaStream.Kind
    switch type.category {
    case .image: return .success([])
    case .video: primary = .video
    case .audio: primary = .audio
    }
    var main = unique(streams.filter { $0.kind == primary })
    // A movie without a video track (an audio-only QuickTime file or program stream) plays
    // its audio, so its audio decides.
    if main.isEmpty, primary == .video { main = unique(streams.filter { $0.kind == .audio }) }
    let playable = main.filter { CodecTable.support(of: $0) != .doesNotDecode }
    if !main.isEmpty, playable.isEmpty {
      return .failure(refusal(main, type: type))
    }
    var warnings: [String] = []
    for stream in unique(streams) {
      let name = CodecTable.name(of: stream)
      switch CodecTable.support(of: stream) {
      case .decodes, .notPlayed:
        break
      case .dependsOnDevice(let caveat):
        warnings.append("The \(label(stream.kind)) is \(name) (\(stream.codec)): \(caveat).")
      case .doesNotDecode:
        warnings.append(
          "One \(label(stream.kind)) is \(name) (\(stream.codec)), which iOS does not decode: it will not play."
        )
      }
    }
    return .success(warnings)
  }

  /// The `unsupported_codec` error for a file none of whose main `streams` decodes:
  /// the message names the codecs in words, `detected` as a MIME type with `codecs`.
  static func refusal(_ streams: [MediaStream], type: MediaType) -> AttachmentError {
    let names = unique(streams.map { CodecTable.name(of: $0) })
    let list =
      names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " and " + (names.last ?? "")
    let codecs = unique(streams.map(\.codec)).joined(separator: ", ")
    let movieWithoutVideo = type.category == .video && !streams.contains { $0.kind == .video }
    let subject =
      movieWithoutVideo
      ? "The movie has no video track, and its audio is" : "The \(type.category.rawValue) is"
    return AttachmentError(
      .unsupportedCodec,
      "\(subject) \(list), which iOS does not decode.",
      detected: "\(type.mime); codecs=\"\(codecs)\"")
  }

  /// What a stream of `kind` is called in a warning.
  private static func label(_ kind: MediaStream.Kind) -> String {
    switch kind {
    case .video: "video track"
    case .audio: "audio track"
    case .other: "track that is neither audio nor video"
    }
  }

  /// `items` without repeats, in order.
  private static func unique<T: Hashable>(_ items: [T]) -> [T] {
    var seen = Set<T>()
    return items.filter { seen.insert($0).inserted }
  }
}
