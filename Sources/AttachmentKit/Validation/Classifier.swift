/// Turns what the probes proved into a media type, or a refusal that names what the bytes are.
enum Classifier {
  /// The category a stream's first bytes put it in, or why it is refused. Used while
  /// streaming, before the whole file is there (an MP4's tracks may come last). An MP4 whose
  /// moov lies in the prefix is refused here already when none of its codecs decodes.
  static func category(
    forPrefix report: ProbeReport, detected: @autoclosure () -> String?
  ) -> Result<MediaType.Category?, AttachmentError> {
    if let type = report.format.row.mediaType { return .success(type.category) }
    // ISO BMFF: the brand and the tracks decide.
    if let refusal = refusedBrand(report, detected: detected) { return .failure(refusal) }
    // A moov inside the prefix (faststart) names the codecs now; one at the end waits for
    // the complete file.
    if !report.streams.isEmpty {
      let type: MediaType = report.isQuickTime ? .mov : report.hasVideoTrack ? .mp4 : .m4a
      if case .failure(let refusal) = CodecCheck.judge(report.streams, type: type) {
        return .failure(refusal)
      }
    }
    if isAudioBrand(report) { return .success(.audio) }
    return .success(nil)  // video or audio: the tracks decide once the file is complete
  }

  /// The media type of a complete file the probes inspected, or why it is refused.
  static func mediaType(
    for report: ProbeReport, detected: @autoclosure () -> String?
  ) -> Result<MediaType, AttachmentError> {
    if let type = report.format.row.mediaType { return .success(type) }
    // ISO BMFF: the brand and the tracks decide.
    if let refusal = refusedBrand(report, detected: detected) { return .failure(refusal) }
    // A movie or an M4A needs a track of its category with a sample entry: one without any
    // (no track at all, or only text or metadata) has nothing to play.
    guard report.streams.contains(where: { $0.kind != .other }) else {
      let what = report.isQuickTime ? "QuickTime movie" : "MPEG-4 file"
      return .failure(
        AttachmentError(
          .unsupportedType, "The \(what) has neither a video nor an audio track: nothing in it plays.",
          detected: detected()))
    }
    if report.isQuickTime { return .success(.mov) }
    if report.hasVideoTrack { return .success(.mp4) }
    return .success(.m4a)
  }

  private static func isAudioBrand(_ report: ProbeReport) -> Bool {
    guard let major = report.majorBrand else { return false }
    return MediaType.m4a.isoBrands.contains(major)
  }

  private static func refusedBrand(_ report: ProbeReport, detected: () -> String?) -> AttachmentError? {
    guard let major = report.majorBrand, let mime = ForeignFormat.byISOBrand[major]?.mime else { return nil }
    return AttachmentError(
      .unsupportedType,
      "This is \(mime) (ISO brand '\(ProbeMath.trimmed(major))'), not an accepted attachment type.",
      detected: detected() ?? mime)
  }
}
