/// The miss path's poster time: once a video is accepted (as the server sent it, or as a
/// rescue made it), and before it is published, its poster time is proposed in a rescue worker
/// (``PosterTimeConfiguration``) and stored in its validation, so the record keeps it and every
/// hit carries it. A hit never comes here.
extension AttachmentPipeline {
  /// Sets `validation`'s ``Validation/posterTimeSeconds`` for the video in `file` when the
  /// configuration asks for it (``PipelineConfiguration/posterTime``), within its budget and
  /// before `signal`'s deadline. Nothing is proposed (and nothing fails) when the search times
  /// out, fails, or the caller has gone.
  func proposePosterTime(_ validation: inout Validation?, file: CacheBodyFile?, signal: StopSignal) {
    guard let configuration = configuration.posterTime, let file, var accepted = validation,
      accepted.category == .video, accepted.posterTimeSeconds == nil, signal.reason == nil
    else { return }
    accepted.posterTimeSeconds = configuration.propose(
      path: file.path, validation: accepted, deadline: signal.deadline,
      isCancelled: { signal.reason == .cancelled })
    validation = accepted
  }
}
