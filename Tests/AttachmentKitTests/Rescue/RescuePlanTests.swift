import TestTraits
import Testing

@testable import AttachmentKit

/// The rescue's arithmetic as values: the delivered format and the box an image must fit.
@Suite("Rescue: plan", .cpuBound)
struct RescuePlanTests {
  let limits = ValidationLimits()
  let configuration = RescueConfiguration()

  @Test("a small still image is converted at its own size: JPEG, or PNG with alpha")
  func smallImage() {
    let photo = RescuePlan(
      width: 64, height: 48, bytes: 500, hasAlpha: false, animated: false, limits: limits,
      configuration: configuration)
    let alpha = RescuePlan(
      width: 64, height: 48, bytes: 500, hasAlpha: true, animated: false, limits: limits,
      configuration: configuration)
    let animation = RescuePlan(
      width: 64, height: 48, bytes: 500, hasAlpha: true, animated: true, limits: limits,
      configuration: configuration)
    #expect(photo.output == .jpeg && photo.box == 64 && !photo.downscales)
    #expect(alpha.output == .png)
    #expect(animation.output == .gif)
    #expect(!alpha.downscales && !animation.downscales)
  }

  @Test("24 MP is bounded by the longest side; the box keeps the decoded size under the ceiling")
  func pixelCeiling() {
    let plan = RescuePlan(
      width: 6000, height: 4000, bytes: 4_000_000, hasAlpha: false, animated: false, limits: limits,
      configuration: configuration)
    #expect(plan.box == 4096)
    #expect(plan.downscales)

    var wide = configuration
    wide.maximumDimension = 100_000
    let unbounded = RescuePlan(
      width: 6000, height: 4000, bytes: 4_000_000, hasAlpha: false, animated: false, limits: limits,
      configuration: wide)
    let shorter = Int64(unbounded.box) * 4000 / 6000 + 1
    #expect(Int64(unbounded.box) * shorter * 4 <= limits.maximumDecodedImageBytes)
    #expect(unbounded.box > 4700)
  }

  @Test("an animation's frames are downscaled together into the animation budget")
  func animationBudget() {
    // 1,000 frames of 640 × 480: 307 MP in all, into the 8 MP default budget
    let plan = RescuePlan(
      width: 640, height: 480, bytes: 1_000_000, hasAlpha: false, animated: true, frames: 1_000,
      limits: ValidationLimits(), configuration: RescueConfiguration())
    #expect(plan.output == .gif)
    let scale = Double(plan.box) / 640
    let total = Double(640) * scale * Double(480) * scale * 1_000
    #expect(total <= 8_000_000 && total > 7_800_000, "\(total) pixels at box \(plan.box)")
    #expect(plan.downscales)
    // and a short animation is left at its size
    let short = RescuePlan(
      width: 640, height: 480, bytes: 1_000_000, hasAlpha: false, animated: true, frames: 10,
      limits: ValidationLimits(), configuration: RescueConfiguration())
    #expect(short.box == 640 && !short.downscales)
  }

  @Test("a source over the byte limit shrinks its area by the ratio of the bytes")
  func byteLimit() {
    let plan = RescuePlan(
      width: 4000, height: 3000, bytes: 12_000_000, hasAlpha: false, animated: false, limits: limits,
      configuration: configuration)
    #expect(plan.downscales)
    #expect(plan.box == Int((4000 * (10.0 / 12.0).squareRoot() * 0.999).rounded(.down)))
    #expect(RescuePlan.smallerBox(than: 1000, bytes: 40, limit: 10) == 450)
    #expect(RescuePlan.smallerBox(than: 1000, bytes: 11, limit: 10) < 1000)
  }
}
