import Crypto
import Foundation

/// Signs webhook deliveries by the Standard Webhooks scheme (standardwebhooks.com): an
/// HMAC-SHA256 over `<id>.<timestamp>.<body>` with each of the endpoint's secrets, sent as
/// `webhook-id`, `webhook-timestamp` (seconds) and `webhook-signature` (`v1,<base64>`, one per
/// secret, separated by spaces, so an endpoint rotating its secret accepts either).
public struct WebhookSigner: Sendable {
    /// The keys, from secrets written `whsec_<base64>` (the prefix is optional).
    let keys: [SymmetricKey]

    /// - Throws: ``FunctionError`` for a secret that is not base64 or is shorter than 24
    ///   bytes, or for no secret at all.
    public init(secrets: [String], function: String) throws {
        guard !secrets.isEmpty else { throw FunctionError.invalidDefinition(function: function, "a webhook needs at least one secret") }
        keys = try secrets.map { secret in
            let encoded = secret.hasPrefix("whsec_") ? String(secret.dropFirst(6)) : secret
            guard let bytes = Data(base64Encoded: encoded), bytes.count >= 24 else {
                throw FunctionError.invalidDefinition(
                    function: function, "a webhook secret is whsec_ and at least 24 random bytes in base64")
            }
            return SymmetricKey(data: bytes)
        }
    }

    /// A new secret of 32 random bytes, in the `whsec_` form.
    public static func makeSecret<R: RandomNumberGenerator>(using random: inout R) -> String {
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &random) }
        return "whsec_" + Data(bytes).base64EncodedString()
    }

    /// The three headers for delivering `body` as message `id` at `timestamp` (seconds since the epoch).
    public func headers(id: String, timestamp: Int64, body: [UInt8]) -> [(name: String, value: String)] {
        var signed = Array("\(id).\(timestamp).".utf8)
        signed += body
        let signatures = keys.map { key in
            "v1," + Data(HMAC<SHA256>.authenticationCode(for: signed, using: key)).base64EncodedString()
        }
        return [
            ("webhook-id", id),
            ("webhook-timestamp", String(timestamp)),
            ("webhook-signature", signatures.joined(separator: " ")),
        ]
    }
}
