/// One ISO BMFF box (QuickTime atom) header: its type and where its payload and end are.
///
/// Sizes follow ISO/IEC 14496-12: a 32-bit size, 1 for a 64-bit `largesize` after the type,
/// 0 for "to the end of the enclosing box or file"; a 'uuid' box adds a 16-byte user type.
struct ISOBox {
  /// The four-character type as a big-endian integer.
  let type: UInt32
  /// Offset of the size field.
  let start: Int
  /// Offset of the payload (after size, type, largesize and user type).
  let payload: Int
  /// Offset just past the box. For a box in a prefix this may exceed the readable bytes.
  let end: Int
  /// The size field was 0: the box runs to the end of its parent.
  let extendsToEnd: Bool

  /// Bytes of payload.
  var payloadSize: Int { end - payload }

  /// The type as text, e.g. "moov".
  var typeName: String { ProbeMath.fourCC(type) }

  /// The result of reading a header.
  enum Header {
    /// A header that is well-formed (its end may lie past the readable bytes).
    case box(ISOBox)
    /// The bytes end inside the header.
    case cut
    /// The size is impossible (below the header's own length, or overflowing).
    case invalid(String)
  }

  /// The box type whose header carries a 16-byte user type.
  private static let uuid = ProbeMath.code("uuid")

  /// Reads the header at `offset`; a size of 0 makes the box end at `limit` (its parent's end,
  /// or the end of the file).
  static func header(_ reader: ByteReader, at offset: Int, limit: Int) -> Header {
    guard let size32 = reader.u32be(offset), let type = reader.u32be(offset + 4) else {
      return .cut
    }
    var headerSize = 8
    var end: Int
    var toEnd = false
    switch size32 {
    case 0:
      end = limit
      toEnd = true
    case 1:
      guard let large = reader.u64be(offset + 8) else { return .cut }
      guard large >= 16, let size = ProbeMath.int(large), let sum = ProbeMath.add(offset, size)
      else { return .invalid("box '\(ProbeMath.fourCC(type))' has an impossible 64-bit size") }
      headerSize = 16
      end = sum
    case 2...7:
      return .invalid("box '\(ProbeMath.fourCC(type))' has size \(size32), below 8")
    default:
      end = offset + Int(size32)
    }
    if type == uuid { headerSize += 16 }
    guard end >= offset + headerSize else {
      return .invalid("box '\(ProbeMath.fourCC(type))' is smaller than its header")
    }
    return .box(
      ISOBox(type: type, start: offset, payload: offset + headerSize, end: end, extendsToEnd: toEnd))
  }

  /// The child boxes of `parent` (which must lie inside the readable bytes), in order. A tail
  /// shorter than a header (QuickTime's 4-byte zero terminator) is ignored. Fails when a child
  /// runs past its parent or there are too many.
  static func children(_ reader: ByteReader, of parent: ISOBox, skipping: Int = 0)
    -> Result<[ISOBox], ProbeProblem>
  {
    var boxes: [ISOBox] = []
    var position = parent.payload + skipping
    while parent.end - position >= 8 {
      guard boxes.count < ProbeLimits.maxChildren else {
        return .failure(.malformed("box '\(parent.typeName)' has too many children"))
      }
      switch header(reader, at: position, limit: parent.end) {
      case .cut:
        return .failure(.truncated("box '\(parent.typeName)' is cut off"))
      case .invalid(let detail):
        return .failure(.malformed(detail))
      case .box(let child):
        guard child.end <= parent.end else {
          return .failure(
            .malformed("box '\(child.typeName)' runs past its parent '\(parent.typeName)'"))
        }
        boxes.append(child)
        position = child.end
      }
    }
    return .success(boxes)
  }
}
