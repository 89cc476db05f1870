import Crypto
import Foundation
import HearthFunctions
import Testing

/// Webhook signatures by the Standard Webhooks scheme: the published test vector, one
/// signature per secret (for rotation), and the secrets refused with the function named.
struct WebhookSignerTests {
    static let vectorID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
    static let vectorTimestamp: Int64 = 1_614_265_330
    static let vectorBody = Array(#"{"test": 2432232314}"#.utf8)
    static let vectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

    static func header(_ name: String, in headers: [(name: String, value: String)]) -> String? {
        headers.first { $0.name == name }?.value
    }

    @Test func theStandardWebhooksTestVectorSignsAsPublished() throws {
        let signer = try WebhookSigner(secrets: [Self.vectorSecret], function: "hook")
        let headers = signer.headers(id: Self.vectorID, timestamp: Self.vectorTimestamp, body: Self.vectorBody)
        #expect(headers.map(\.name) == ["webhook-id", "webhook-timestamp", "webhook-signature"])
        #expect(Self.header("webhook-id", in: headers) == Self.vectorID)
        #expect(Self.header("webhook-timestamp", in: headers) == "1614265330")
        #expect(Self.header("webhook-signature", in: headers) == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test func theWhsecPrefixIsOptional() throws {
        let bare = try WebhookSigner(secrets: [String(Self.vectorSecret.dropFirst(6))], function: "hook")
        let headers = bare.headers(id: Self.vectorID, timestamp: Self.vectorTimestamp, body: Self.vectorBody)
        #expect(Self.header("webhook-signature", in: headers) == "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    }

    @Test func twoSecretsGiveTwoSpaceSeparatedSignaturesEachVerifyingWithItsKey() throws {
        var random = SystemRandomNumberGenerator()
        let second = WebhookSigner.makeSecret(using: &random)
        let signer = try WebhookSigner(secrets: [Self.vectorSecret, second], function: "hook")
        let body = Array(#"{"specversion":"1.0"}"#.utf8)
        let headers = signer.headers(id: "evt-1", timestamp: 1_700_000_000, body: body)
        let signatures = try #require(Self.header("webhook-signature", in: headers)).split(separator: " ").map(String.init)
        #expect(signatures.count == 2)
        let signed = Array("evt-1.1700000000.".utf8) + body
        for (secret, signature) in zip([Self.vectorSecret, second], signatures) {
            let key = SymmetricKey(data: try #require(Data(base64Encoded: String(secret.dropFirst(6)))))
            let expected = "v1," + Data(HMAC<SHA256>.authenticationCode(for: signed, using: key)).base64EncodedString()
            #expect(signature == expected)
        }
        #expect(signatures[0] != signatures[1])
    }

    @Test func aMadeSecretIsWhsecAnd32RandomBytes() throws {
        var random = SystemRandomNumberGenerator()
        let secret = WebhookSigner.makeSecret(using: &random)
        #expect(secret.hasPrefix("whsec_"))
        #expect(Data(base64Encoded: String(secret.dropFirst(6)))?.count == 32)
        #expect(secret != WebhookSigner.makeSecret(using: &random))
    }

    @Test(arguments: [
        ["whsec_not base64 at all!"],
        ["whsec_" + Data(repeating: 7, count: 23).base64EncodedString()],
        [WebhookSignerTests.vectorSecret, "whsec_"],
        [],
    ])
    func badSecretsAreRefusedNamingTheFunction(secrets: [String]) {
        let error = #expect(throws: FunctionError.self) { try WebhookSigner(secrets: secrets, function: "notifyFollowers") }
        guard case .invalidDefinition(let function, let reason)? = error else {
            Issue.record("not an invalid definition: \(String(describing: error))")
            return
        }
        #expect(function == "notifyFollowers")
        #expect(reason.contains("secret"))
        #expect(error?.description.hasPrefix("function notifyFollowers: ") == true)
    }

    @Test func twentyFourBytesIsEnough() throws {
        let secret = "whsec_" + Data(repeating: 7, count: 24).base64EncodedString()
        let signer = try WebhookSigner(secrets: [secret], function: "hook")
        #expect(signer.headers(id: "a", timestamp: 1, body: []).count == 3)
    }
}
