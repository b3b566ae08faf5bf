import AttachmentKit

/// The library's messages name its settings as a Swift caller knows them
/// (`allowPrivateNetworks`); a person at the command line knows them as flags. The command line
/// rewords its errors with this table before printing them (table, JSON, serve's info route).
enum SettingNames {
  /// Each setting's name in the library's messages, and the flag that sets it, longest first.
  static let flags: [(setting: String, flag: String)] = [
    ("proxy.acceptsUncheckedDestinations (--proxy-unchecked)", "--proxy-unchecked"),
    ("proxy.acceptsUncheckedDestinations", "--proxy-unchecked"),
    ("allowPrivateNetworks", "--allow-private-networks"),
  ]

  /// `error` with each setting its message names replaced by the flag; the code, kind, status
  /// and detected type unchanged.
  static func reworded(_ error: AttachmentError) -> AttachmentError {
    var message = error.message
    for (setting, flag) in flags { message = message.replacing(setting, with: flag) }
    guard message != error.message else { return error }
    return AttachmentError(
      error.code, message, httpStatus: error.httpStatus, detected: error.detected, kind: error.kind)
  }
}
