import Glibc

/// A Windows bitmap's declared size, read from its header: FFmpeg's BMP demuxer states none in
/// the stream parameters (its decoder learns it from the frame, and refuses one over the budget
/// without saying why), so the poster rescuer reads it first to refuse a bitmap over the frame
/// budget as `too_many_pixels`, before FFmpeg opens it.
enum BitmapHeader {
  /// The width and height (absolute: a negative height is a top-down bitmap) of the bitmap at
  /// `path`, from its BITMAPINFOHEADER (or later) or OS/2 BITMAPCOREHEADER; `nil` when the file
  /// cannot be read or is not a bitmap.
  static func size(of path: String) -> (width: Int64, height: Int64)? {
    let file = open(path, O_RDONLY | O_CLOEXEC)
    guard file >= 0 else { return nil }
    defer { close(file) }
    var bytes = [UInt8](repeating: 0, count: 26)
    let read = bytes.withUnsafeMutableBytes { pread(file, $0.baseAddress, 26, 0) }
    guard read == 26, bytes[0] == 0x42, bytes[1] == 0x4D else { return nil }
    func u16(_ at: Int) -> Int64 { Int64(bytes[at]) | Int64(bytes[at + 1]) << 8 }
    func u32(_ at: Int) -> UInt32 { UInt32(truncatingIfNeeded: u16(at) | u16(at + 2) << 16) }
    let headerSize = u32(14)
    if headerSize == 12 { return (u16(18), u16(20)) }
    guard headerSize >= 40 else { return nil }
    let width = Int64(Int32(bitPattern: u32(18)))
    let height = Int64(Int32(bitPattern: u32(22)))
    return (abs(width), abs(height))
  }
}
