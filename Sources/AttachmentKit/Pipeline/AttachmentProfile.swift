/// The target a file is made for: the limits it must meet and the rules of its output, applied
/// on top of a pipeline's own configuration. One campaign usually goes to iOS and to Android;
/// each platform (or a small banner) is a profile, and a profile's files are cached apart.
///
/// | profile | takes | delivers | made from |
/// |---|---|---|---|
/// | ``ios`` | the configuration as it is (Apple's limits by default) | the file as accepted | — |
/// | ``android`` | images only; video and audio refused (`unsupported_type`) | JPEG or PNG (alpha), ≤ 1 MB, ≤ 1024 px on the long side; an animation's first frame | Firebase's notification image limits |
/// | ``iOSCompact(longestSide:)`` | the configuration as it is | images over 2048 px on the long side downscaled; GIFs left animated | a banner shows about 1000 px |
///
/// A profile other than ``ios`` files its derivatives under keys of their own
/// (``CacheKeyRules/variant``, the profile's ``name``) beside the original's: a caller of
/// another profile never finds them, and an entry of one profile never answers another.
///
/// ```swift
/// let request = try AttachmentRequest(url: "https://cdn.example.com/p/1.jpg", timeout: .seconds(25),
///                                     profile: .android)
/// let attachment = try await pipeline.attachment(request)   // a JPEG ≤ 1 MB, ≤ 1024 px
/// ```
public struct AttachmentProfile: Sendable, Hashable, CustomStringConvertible {
  /// The profile's name: `ios`, `android`, `ios-compact` (lower case, letters, digits and
  /// `-`); what serve's route, the command line's `--profile` and the cache's key space use.
  public let name: String
  /// The types accepted; `nil`: every type the configuration accepts.
  public var acceptedTypes: Set<MediaType>?
  /// The largest image, in bytes; `nil`: the configuration's.
  public var maximumImageBytes: Int64?
  /// The longest side a delivered image may have, in pixels (a longer one is downscaled, or
  /// refused when it cannot be); `nil`: no such limit.
  public var maximumImageDimension: Int?
  /// The longest side of an accepted image the profile downscales, in pixels (GIFs left
  /// animated; an image it cannot downscale is delivered as accepted); `nil`: none.
  public var downscalesAcceptedOver: Int?
  /// Whether animations stay animated; `false`: their first frame, as a still.
  public var keepsAnimation: Bool
  /// Whether the profile's files go to iOS devices, where App Transport Security applies: the
  /// `ats` warning (``TransportSecurity``) is given only then (`false` for ``android``).
  public var isForIOS: Bool
  /// Whether the configuration's video and audio rescuers are kept (`false` when the profile
  /// takes images only).
  public var keepsMediaRescuers: Bool

  /// Makes a profile of your own (prefer the standard ones: ``ios``, ``android``,
  /// ``iOSCompact(longestSide:)``). `name` must be unique among the profiles one cache serves:
  /// it names the key space the profile's files are cached in.
  public init(
    name: String, acceptedTypes: Set<MediaType>? = nil, maximumImageBytes: Int64? = nil,
    maximumImageDimension: Int? = nil, downscalesAcceptedOver: Int? = nil, keepsAnimation: Bool = true,
    keepsMediaRescuers: Bool = true, isForIOS: Bool = true
  ) {
    self.isForIOS = isForIOS
    self.name = name
    self.acceptedTypes = acceptedTypes
    self.maximumImageBytes = maximumImageBytes
    self.maximumImageDimension = maximumImageDimension
    self.downscalesAcceptedOver = downscalesAcceptedOver
    self.keepsAnimation = keepsAnimation
    self.keepsMediaRescuers = keepsMediaRescuers
  }

  /// iOS as the configuration says: the default, and what every face did before profiles.
  public static let ios = AttachmentProfile(name: "ios")

  /// An FCM notification image (Firebase: JPEG or PNG, at most 1 MB): images converted to
  /// JPEG (PNG with alpha) and downscaled to at most 1024 pixels on the long side and 1 MB; an
  /// animation becomes its first frame; video and audio are refused, naming the profile.
  public static let android = AttachmentProfile(
    name: "android", acceptedTypes: [.jpeg, .png], maximumImageBytes: 1_000_000, maximumImageDimension: 1024,
    keepsAnimation: false, keepsMediaRescuers: false, isForIOS: false)

  /// iOS for a small banner: accepted images over `longestSide` pixels on the long side
  /// (default 2048) are downscaled; GIFs are left animated; everything else as ``ios``.
  public static func iOSCompact(longestSide: Int = 2048) -> AttachmentProfile {
    AttachmentProfile(name: "ios-compact", downscalesAcceptedOver: max(1, longestSide))
  }

  /// The standard profiles by name: `ios`, `android`, `ios-compact` (2048 pixels).
  public static let standard: [String: AttachmentProfile] = [
    "ios": .ios, "android": .android, "ios-compact": .iOSCompact(),
  ]

  /// The standard profile called `name`.
  /// - Throws: `unknown_profile` naming the profiles there are, for any other name.
  public init(named name: String) throws(AttachmentError) {
    guard let profile = Self.standard[name] else {
      let names = Self.standard.keys.sorted().joined(separator: ", ")
      throw AttachmentError(.unknownProfile, "There is no profile \"\(name)\"; the profiles are \(names).")
    }
    self = profile
  }

  /// The name.
  public var description: String { name }

  /// Whether this profile changes nothing (``ios``): its files are the configuration's own.
  var isIdentity: Bool {
    acceptedTypes == nil && maximumImageBytes == nil && maximumImageDimension == nil
      && downscalesAcceptedOver == nil && keepsAnimation && keepsMediaRescuers && isForIOS
  }

  /// `base` with this profile's limits and output rules: what the pipeline that answers this
  /// profile's requests is configured with (and what `attachkit rescue --profile` validates
  /// and rescues with). Its cache files keys in the profile's own key space; a profile that
  /// changes images turns the image rescuer on (with the base's settings, if it has one).
  public func applied(to base: PipelineConfiguration) -> PipelineConfiguration {
    guard !isIdentity else { return base }
    var configuration = base
    configuration.cache.keyRules = base.cache.keyRules.inVariant(name)
    var limits = base.limits
    limits.profileName = name
    limits.acceptedTypes = acceptedTypes.map { types in
      limits.acceptedTypes.map { $0.intersection(types) } ?? types
    }
    if let bytes = maximumImageBytes { limits.maximumImageBytes = min(limits.maximumImageBytes, bytes) }
    if let side = maximumImageDimension {
      limits.maximumImageDimension = min(limits.maximumImageDimension ?? side, side)
    }
    configuration.limits = limits
    var rescue = base.rescue ?? RescueConfiguration()
    rescue.keepsAnimation = rescue.keepsAnimation && keepsAnimation
    for side in [maximumImageDimension, downscalesAcceptedOver].compactMap({ $0 }) {
      rescue.maximumDimension = min(rescue.maximumDimension, side)
    }
    if let side = downscalesAcceptedOver { rescue.downscalesAcceptedOver = side }
    if !keepsMediaRescuers { configuration.rescuers = [] }
    if !isForIOS { configuration.warnsAboutTransportSecurity = false }
    // Set after the limits: the image rescuer delivers within the profile's limits.
    configuration.rescue = rescue
    return configuration
  }
}
