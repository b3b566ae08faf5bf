/// Sees a response while it streams, and may stop it.
///
/// The engine calls an inspector on its own thread, one call at a time and in order: first
/// ``inspect(head:)`` once for the final response (after redirects), then ``inspect(body:at:)``
/// for each chunk of the body until a call returns ``InspectorVerdict/enough``. Calls must be
/// quick (no I/O) and must not throw or trap; a rejection stops the transfer at once and
/// becomes the download's error.
public protocol ResponseInspector: Sendable {
  /// Called once the final response's headers are in, before any body byte is written.
  func inspect(head: ResponseHead) -> InspectorVerdict

  /// Called with each chunk of the body as it is written, `offset` bytes into the body.
  func inspect(body chunk: UnsafeRawBufferPointer, at offset: Int64) -> InspectorVerdict

  /// Called when the body starts over: a retried attempt got a whole new body (the origin
  /// answered a ranged request with `200`, or the first attempt's response could not be
  /// resumed). Forget every byte and head seen; ``inspect(head:)`` follows for the new body.
  /// A resumed body (`206`) is not restarted: its chunks continue at their offsets, with no
  /// second ``inspect(head:)``.
  func restart()
}

extension ResponseInspector {
  /// Does nothing: for an inspector that keeps nothing between calls.
  public func restart() {}
}

/// What an inspector wants after a call.
public enum InspectorVerdict: Sendable {
  /// Keep going and keep showing me body bytes.
  case more
  /// Keep going; I need no more bytes.
  case enough
  /// Stop the transfer now and fail the download with this error.
  case reject(AttachmentError)
}

/// The status and headers of the final response, as an inspector sees them before the body.
public struct ResponseHead: Sendable {
  /// The HTTP status code.
  public var status: Int
  /// The response headers.
  public var headers: ResponseHeaders
}
