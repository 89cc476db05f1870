import Crypto
import Foundation

/// A browser's push subscription, as the Push API's `PushSubscription.toJSON()` gives it:
/// `{"endpoint": "https://…", "expirationTime": null, "keys": {"p256dh": "…", "auth": "…"}}`.
///
/// Only a subscription that can be used is made: the endpoint is an absolute `https` URL of at
/// most ``maxEndpointLength`` characters, `p256dh` is an uncompressed P-256 public key and `auth`
/// is 16 bytes (RFC 8291 §2, §3). What a browser sends is untrusted input: a bad one is refused
/// with a ``Problem`` that says what is wrong, not found out later when a push fails.
public struct WebPushSubscription: Sendable, Hashable, Identifiable, Encodable {
    /// The longest endpoint taken. Push services' endpoints are a few hundred characters; the
    /// limit keeps what a browser may make the server store (and POST to) bounded.
    public static let maxEndpointLength = 2000

    /// Where push messages for this browser are POSTed (RFC 8030 §5).
    public let endpoint: URL
    /// When the push service will end the subscription, if the browser was told.
    public let expirationTime: Date?
    /// The browser's P-256 public key: 65 bytes, the uncompressed point.
    public let p256dh: [UInt8]
    /// The browser's authentication secret: 16 bytes.
    public let auth: [UInt8]

    /// A subscription from its parts, each as `toJSON()` writes it (keys base64url).
    ///
    /// - Parameters:
    ///   - allowsLoopbackHTTP: also take a plain `http` endpoint on this machine (`127.0.0.1`,
    ///     `::1`, `localhost`): for tests against a local push service only.
    /// - Throws: ``Problem`` naming the first part that is wrong.
    public init(
        endpoint: String, expirationTime: Date? = nil, p256dh: String, auth: String, allowsLoopbackHTTP: Bool = false
    ) throws(Problem) {
        self.endpoint = try Self.validEndpoint(endpoint, allowsLoopbackHTTP: allowsLoopbackHTTP)
        if let expirationTime, !expirationTime.timeIntervalSince1970.isFinite || expirationTime.timeIntervalSince1970 < 0 {
            throw Problem.badExpirationTime
        }
        self.expirationTime = expirationTime

        guard let key = Base64URL.decode(p256dh) else { throw Problem.p256dhNotBase64URL }
        guard key.count == 65 else { throw Problem.p256dhWrongLength(key.count) }
        guard key[0] == 0x04 else { throw Problem.p256dhNotUncompressedPoint }
        // swift-crypto checks that the point lies on the curve: a key that does not could not be
        // agreed with, and every message encrypted for it would be lost.
        guard (try? P256.KeyAgreement.PublicKey(x963Representation: key)) != nil else { throw Problem.p256dhNotOnCurve }
        self.p256dh = key

        guard let secret = Base64URL.decode(auth) else { throw Problem.authNotBase64URL }
        guard secret.count == 16 else { throw Problem.authWrongLength(secret.count) }
        self.auth = secret
    }

    /// A subscription from the JSON `PushSubscription.toJSON()` gives (what a web page posts).
    ///
    /// `expirationTime` is milliseconds since 1970 or `null`; members other than those named
    /// are ignored.
    /// - Throws: ``Problem``: ``Problem/notSubscriptionJSON(_:)`` when the JSON does not have
    ///   the subscription's shape, otherwise what ``init(endpoint:expirationTime:p256dh:auth:allowsLoopbackHTTP:)``
    ///   finds wrong.
    public init(json: Data, allowsLoopbackHTTP: Bool = false) throws(Problem) {
        let form: JSONForm
        do {
            form = try JSONDecoder().decode(JSONForm.self, from: json)
        } catch let error as DecodingError {
            throw Problem.notSubscriptionJSON(Self.describe(error))
        } catch {
            throw Problem.notSubscriptionJSON("not JSON")
        }
        var expiration: Date?
        if let milliseconds = form.expirationTime {
            guard milliseconds.isFinite, milliseconds >= 0 else { throw Problem.badExpirationTime }
            expiration = Date(timeIntervalSince1970: milliseconds / 1000)
        }
        try self.init(
            endpoint: form.endpoint, expirationTime: expiration, p256dh: form.keys.p256dh, auth: form.keys.auth,
            allowsLoopbackHTTP: allowsLoopbackHTTP)
    }

    /// A short, stable key for this subscription in the database: ``id(endpoint:)``.
    public var id: String { Self.id(endpoint: endpoint) }

    /// The key of the subscription with `endpoint`: the first 16 bytes of the SHA-256 of the
    /// endpoint, base64url (22 characters, all allowed in a database key). The endpoint is what
    /// identifies a subscription (a new subscription gets a new endpoint), and is too long and
    /// full of `/` and `.` to be a key itself.
    public static func id(endpoint: URL) -> String {
        Base64URL.encode(Array(SHA256.hash(data: Array(endpoint.absoluteString.utf8)).prefix(16)))
    }

    /// True once the push service has ended the subscription, by the time the browser gave.
    public func hasExpired(at now: Date) -> Bool {
        expirationTime.map { $0 <= now } ?? false
    }

    /// The subscription as `toJSON()` writes it (what ``init(json:allowsLoopbackHTTP:)`` reads).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONForm.CodingKeys.self)
        try container.encode(endpoint.absoluteString, forKey: .endpoint)
        if let expirationTime {
            try container.encode(Int64((expirationTime.timeIntervalSince1970 * 1000).rounded()), forKey: .expirationTime)
        } else {
            try container.encodeNil(forKey: .expirationTime)
        }
        try container.encode(JSONForm.Keys(p256dh: Base64URL.encode(p256dh), auth: Base64URL.encode(auth)), forKey: .keys)
    }

    /// What is wrong with a subscription a browser sent.
    public enum Problem: Error, Hashable, CustomStringConvertible {
        /// The JSON is not `PushSubscription.toJSON()`'s shape; says where.
        case notSubscriptionJSON(String)
        /// The endpoint is longer than ``WebPushSubscription/maxEndpointLength``.
        case endpointTooLong(Int)
        /// The endpoint is not an absolute URL with a host.
        case endpointNotAbsoluteURL
        /// The endpoint's scheme (given) is not `https` (or `http` to this machine, when allowed).
        case endpointNotHTTPS(String)
        /// The endpoint carries a user name or password.
        case endpointHasCredentials
        /// `expirationTime` is negative or not a number.
        case badExpirationTime
        /// `keys.p256dh` is not base64url.
        case p256dhNotBase64URL
        /// `keys.p256dh` is not 65 bytes (the count given).
        case p256dhWrongLength(Int)
        /// `keys.p256dh` does not start with 0x04 (an uncompressed point).
        case p256dhNotUncompressedPoint
        /// `keys.p256dh` is not a point on the P-256 curve.
        case p256dhNotOnCurve
        /// `keys.auth` is not base64url.
        case authNotBase64URL
        /// `keys.auth` is not 16 bytes (the count given).
        case authWrongLength(Int)

        public var description: String {
            switch self {
            case .notSubscriptionJSON(let detail): "not a push subscription (PushSubscription.toJSON()): \(detail)"
            case .endpointTooLong(let length):
                "the push endpoint is \(length) characters long; at most \(WebPushSubscription.maxEndpointLength) are taken"
            case .endpointNotAbsoluteURL: "the push endpoint is not an absolute URL with a host"
            case .endpointNotHTTPS(let scheme):
                scheme.lowercased() == "http"
                    ? "the push endpoint must be https (plain http is taken only to this machine, in tests)"
                    : "the push endpoint must be https, not \(scheme)"
            case .endpointHasCredentials: "the push endpoint must not carry a user name or password"
            case .badExpirationTime: "expirationTime must be null or milliseconds since 1970"
            case .p256dhNotBase64URL: "keys.p256dh is not base64url"
            case .p256dhWrongLength(let count): "keys.p256dh is \(count) bytes; a P-256 public key is 65"
            case .p256dhNotUncompressedPoint: "keys.p256dh is not an uncompressed P-256 point (it must start with 0x04)"
            case .p256dhNotOnCurve: "keys.p256dh is not a point on the P-256 curve"
            case .authNotBase64URL: "keys.auth is not base64url"
            case .authWrongLength(let count): "keys.auth is \(count) bytes; the authentication secret is 16"
            }
        }
    }

    /// `toJSON()`'s shape.
    struct JSONForm: Codable {
        var endpoint: String
        var expirationTime: Double?
        var keys: Keys

        struct Keys: Codable {
            var p256dh: String
            var auth: String
        }

        enum CodingKeys: String, CodingKey {
            case endpoint, expirationTime, keys
        }
    }

    /// Hosts plain `http` may go to when tests allow it: this machine only.
    static let loopbackHosts: Set<String> = ["127.0.0.1", "::1", "localhost"]

    static func validEndpoint(_ text: String, allowsLoopbackHTTP: Bool) throws(Problem) -> URL {
        guard text.utf8.count <= maxEndpointLength else { throw Problem.endpointTooLong(text.utf8.count) }
        guard let url = URL(string: text), let scheme = url.scheme, let host = url.host(percentEncoded: false), !host.isEmpty
        else { throw Problem.endpointNotAbsoluteURL }
        switch scheme.lowercased() {
        case "https":
            break
        case "http" where allowsLoopbackHTTP && loopbackHosts.contains(host.lowercased().trimmingCharacters(in: ["[", "]"])):
            break
        default:
            throw Problem.endpointNotHTTPS(scheme)
        }
        // Credentials in a URL end up in logs and databases; no push service hands them out.
        guard url.user == nil, url.password == nil else { throw Problem.endpointHasCredentials }
        return url
    }

    /// Where the JSON went wrong, in the browser's terms (`keys.auth is missing`).
    static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.map(\.stringValue).joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(path(context.codingPath + [key])) is missing"
        case .valueNotFound(_, let context): return "\(path(context.codingPath)) is null"
        case .typeMismatch(_, let context): return "\(path(context.codingPath)) has the wrong type"
        case .dataCorrupted(let context): return context.codingPath.isEmpty ? "not JSON" : "\(path(context.codingPath)) is malformed"
        @unknown default: return "not readable"
        }
    }
}
