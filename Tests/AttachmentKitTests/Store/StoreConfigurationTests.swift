import Foundation
import TestSupport
import Testing

@testable import AttachmentKit

/// The store's settings as the AWS command line reads them: values, no store needed.
@Suite("StoreConfiguration")
struct StoreConfigurationTests {
  @Test("location, endpoint and addressing: path-style for an endpoint of one's own, virtual-hosted on AWS")
  func locationAndAddressing() throws {
    let own = try StoreConfiguration(
      location: "s3://media-cache/fleet/one/", endpoint: "http://127.0.0.1:8333/", accessKeyID: "a",
      secretAccessKey: "s")
    #expect(own.bucket == "media-cache")
    #expect(own.prefix == "fleet/one")
    #expect(!own.virtualHosted)
    #expect(
      own.url(ofObject: own.key("records/x")) == "http://127.0.0.1:8333/media-cache/fleet/one/records/x")
    let aws = try StoreConfiguration(
      location: "s3://media-cache", region: "eu-west-1", accessKeyID: "a", secretAccessKey: "s")
    #expect(aws.virtualHosted)
    #expect(
      aws.url(ofObject: aws.key("content/a.jpg"))
        == "https://media-cache.s3.eu-west-1.amazonaws.com/content/a.jpg")
  }

  @Test(
    "malformed settings are invalid_configuration naming what is wrong",
    arguments: [
      ("media-cache/x", nil, "s3://BUCKET/PREFIX"),
      ("s3://b/x", nil, "bucket name"),
      ("s3://Media/x", nil, "bucket name"),
      ("s3://media/x?y", nil, "prefix"),
      ("s3://media/x", "ftp://host", "endpoint"),
      ("s3://media/x", "http://host/path", "endpoint"),
    ] as [(String, String?, String)])
  func malformed(_ location: String, _ endpoint: String?, _ named: String) {
    #expect {
      _ = try StoreConfiguration(
        location: location, endpoint: endpoint, accessKeyID: "a", secretAccessKey: "s")
    } throws: { error in
      (error as? AttachmentError)?.code == .invalidConfiguration
        && (error as? AttachmentError)?.message.contains(named) == true
    }
  }

  @Test("the environment: keys, token, region, AWS_ENDPOINT_URL_S3 before AWS_ENDPOINT_URL")
  func environment() throws {
    let variables = [
      "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "token",
      "AWS_DEFAULT_REGION": "eu-central-1", "AWS_ENDPOINT_URL": "http://generic:1",
      "AWS_ENDPOINT_URL_S3": "http://s3only:2",
    ]
    let store = try StoreConfiguration.fromEnvironment(location: "s3://bucket/p") { variables[$0] }
    #expect(store.accessKeyID == "AKID")
    #expect(store.secretAccessKey == "secret")
    #expect(store.sessionToken == "token")
    #expect(store.region == "eu-central-1")
    #expect(store.endpoint == "http://s3only:2")
    let given = try StoreConfiguration.fromEnvironment(location: "s3://bucket/p", endpoint: "http://flag:3") {
      variables[$0]
    }
    #expect(given.endpoint == "http://flag:3")
  }

  @Test("a profile of ~/.aws/credentials (AWS_PROFILE), and errors naming what is missing")
  func profileFile() throws {
    let scratch = try ScratchDirectory("store-profile")
    defer { scratch.remove() }
    try FileManager.default.createDirectory(atPath: scratch.path + "/.aws", withIntermediateDirectories: true)
    let text = """
      [default]
      aws_access_key_id = DEFAULTKEY
      aws_secret_access_key = defaultsecret

      # the fleet's
      [fleet]
      aws_access_key_id=FLEETKEY
      aws_secret_access_key = fleet secret
      aws_session_token = tok
      """
    try text.write(toFile: scratch.path + "/.aws/credentials", atomically: true, encoding: .utf8)
    let home = ["HOME": scratch.path]
    let plain = try StoreConfiguration.fromEnvironment(location: "s3://bucket") { home[$0] }
    #expect(plain.accessKeyID == "DEFAULTKEY")
    let fleet = home.merging(["AWS_PROFILE": "fleet"]) { $1 }
    let named = try StoreConfiguration.fromEnvironment(location: "s3://bucket") { fleet[$0] }
    #expect(named.accessKeyID == "FLEETKEY")
    #expect(named.secretAccessKey == "fleet secret")
    #expect(named.sessionToken == "tok")

    let absent = home.merging(["AWS_PROFILE": "nope"]) { $1 }
    #expect {
      _ = try StoreConfiguration.fromEnvironment(location: "s3://bucket") { absent[$0] }
    } throws: { ($0 as? AttachmentError)?.message.contains("[nope]") == true }
    let nowhere = ["HOME": scratch.path + "/none"]
    #expect {
      _ = try StoreConfiguration.fromEnvironment(location: "s3://bucket") { nowhere[$0] }
    } throws: { ($0 as? AttachmentError)?.message.contains("AWS_ACCESS_KEY_ID") == true }
    let half = ["AWS_ACCESS_KEY_ID": "AKID"]
    #expect {
      _ = try StoreConfiguration.fromEnvironment(location: "s3://bucket") { half[$0] }
    } throws: { ($0 as? AttachmentError)?.message.contains("AWS_SECRET_ACCESS_KEY") == true }
  }

  @Test("a lookup's budget: a quarter of the time left, at most 3 s")
  func readBudget() throws {
    let store = FleetStore(
      configuration: try StoreConfiguration(location: "s3://bucket", accessKeyID: "a", secretAccessKey: "s"))
    #expect(store.readBudget(remaining: .seconds(4)) == .seconds(1))
    #expect(store.readBudget(remaining: .seconds(25)) == .seconds(3))
  }
}
