@testable import AttachmentKit

/// URLs that must be refused before any connection, with the code each gets: shared by the
/// downloader's test and ``AttachmentURL``'s, so both checks are held to one list.
enum BadURLs {
  static let cases: [(String, AttachmentError.Code)] = [
    ("ftp://127.0.0.1/file.jpg", .unsupportedScheme),
    ("file:///etc/passwd", .unsupportedScheme),
    ("not a url", .invalidURL),
    ("http://", .invalidURL),
    ("http:///path", .invalidURL),
    ("http://exa mple.com/a.jpg", .invalidURL),
    ("http://example.com/a\u{1B}[31m.jpg", .invalidURL),
    ("http://example.com/a\t.jpg", .invalidURL),
    ("http://example.com/a\u{7F}.jpg", .invalidURL),
    ("http://example.com/a\r\nX-Injected: 1", .invalidURL),
    ("ht!tp://example.com/", .invalidURL),
  ]
}
