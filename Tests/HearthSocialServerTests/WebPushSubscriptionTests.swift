import Crypto
import Foundation
import HearthSocialServer
import Testing

/// What a browser sends as its push subscription, taken or refused before anything is stored.
@Suite("Web Push subscriptions: a browser's PushSubscription, validated")
struct WebPushSubscriptionTests {
    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static let browserKey = Array(P256.KeyAgreement.PrivateKey().publicKey.x963Representation)
    static let p256dh = base64URL(browserKey)
    static let auth = base64URL(Array(0..<16))
    static let endpoint = "https://updates.push.services.mozilla.com/wpush/v2/gAAAAABh-example"

    static func json(endpoint: String = endpoint, expirationTime: String = "null", p256dh: String = p256dh, auth: String = auth) -> Data {
        Data(#"{"endpoint": "\#(endpoint)", "expirationTime": \#(expirationTime), "keys": {"p256dh": "\#(p256dh)", "auth": "\#(auth)"}}"#.utf8)
    }

    @Test("PushSubscription.toJSON()'s form is taken, and written back the same")
    func good() throws {
        let subscription = try WebPushSubscription(json: Self.json(expirationTime: "1767225600000"))
        #expect(subscription.endpoint.absoluteString == Self.endpoint)
        #expect(subscription.p256dh == Self.browserKey)
        #expect(subscription.auth == Array(0..<16))
        #expect(subscription.expirationTime == Date(timeIntervalSince1970: 1_767_225_600))
        #expect(subscription.hasExpired(at: Date(timeIntervalSince1970: 1_767_225_600)))
        #expect(!subscription.hasExpired(at: Date(timeIntervalSince1970: 1_767_225_599)))

        let written = try JSONEncoder().encode(subscription)
        #expect(try WebPushSubscription(json: written) == subscription)
        let object = try #require(try JSONSerialization.jsonObject(with: written) as? [String: Any])
        #expect(object["expirationTime"] as? Int == 1_767_225_600_000)
        #expect((object["keys"] as? [String: String]) == ["p256dh": Self.p256dh, "auth": Self.auth])

        // Without an expiration, `null` is written, as browsers do.
        let open = try WebPushSubscription(endpoint: Self.endpoint, p256dh: Self.p256dh, auth: Self.auth)
        #expect(open.expirationTime == nil && !open.hasExpired(at: .distantFuture))
        #expect(String(decoding: try JSONEncoder().encode(open), as: UTF8.self).contains(#""expirationTime":null"#))
    }

    @Test("The ID is short, stable, a valid database key, and differs between endpoints")
    func id() throws {
        let first = try WebPushSubscription(json: Self.json())
        let again = try WebPushSubscription(json: Self.json(auth: Self.base64URL(Array(repeating: 7, count: 16))))
        let other = try WebPushSubscription(json: Self.json(endpoint: Self.endpoint + "x"))
        #expect(first.id.count == 22)
        #expect(first.id == again.id)
        #expect(first.id != other.id)
        #expect(first.id == WebPushSubscription.id(endpoint: URL(string: Self.endpoint)!))
        #expect(first.id.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
    }

    @Test("An endpoint must be an absolute https URL: plain http, ftp, relative and credentials are refused")
    func endpoints() {
        #expect(throws: WebPushSubscription.Problem.endpointNotHTTPS("http")) {
            try WebPushSubscription(json: Self.json(endpoint: "http://push.example.com/abc"))
        }
        // Plain http to a machine elsewhere is refused even when tests allow loopback http.
        #expect(throws: WebPushSubscription.Problem.endpointNotHTTPS("http")) {
            try WebPushSubscription(json: Self.json(endpoint: "http://push.example.com/abc"), allowsLoopbackHTTP: true)
        }
        #expect(throws: WebPushSubscription.Problem.endpointNotHTTPS("ftp")) {
            try WebPushSubscription(json: Self.json(endpoint: "ftp://push.example.com/abc"))
        }
        #expect(throws: WebPushSubscription.Problem.endpointNotAbsoluteURL) {
            try WebPushSubscription(json: Self.json(endpoint: "/push/abc"))
        }
        #expect(throws: WebPushSubscription.Problem.endpointNotAbsoluteURL) {
            try WebPushSubscription(json: Self.json(endpoint: "https:///push/abc"))
        }
        #expect(throws: WebPushSubscription.Problem.endpointHasCredentials) {
            try WebPushSubscription(json: Self.json(endpoint: "https://user:secret@push.example.com/abc"))
        }
        #expect(
            WebPushSubscription.Problem.endpointNotHTTPS("ftp").description == "the push endpoint must be https, not ftp")
    }

    @Test("Plain http to this machine only when allowed (tests)", arguments: ["127.0.0.1", "[::1]", "localhost", "LOCALHOST"])
    func loopback(host: String) throws {
        let endpoint = "http://\(host):8080/push/abc"
        #expect(throws: WebPushSubscription.Problem.endpointNotHTTPS("http")) {
            try WebPushSubscription(json: Self.json(endpoint: endpoint))
        }
        let subscription = try WebPushSubscription(json: Self.json(endpoint: endpoint), allowsLoopbackHTTP: true)
        #expect(subscription.endpoint.absoluteString == endpoint)
    }

    @Test("An endpoint of more than 2,000 characters is refused")
    func tooLong() throws {
        let base = "https://push.example.com/"
        let longest = base + String(repeating: "a", count: WebPushSubscription.maxEndpointLength - base.count)
        #expect(try WebPushSubscription(json: Self.json(endpoint: longest)).endpoint.absoluteString == longest)
        #expect(throws: WebPushSubscription.Problem.endpointTooLong(2001)) {
            try WebPushSubscription(json: Self.json(endpoint: longest + "a"))
        }
    }

    @Test("p256dh must be an uncompressed P-256 point: 65 bytes, 0x04, on the curve")
    func browserKeys() {
        #expect(throws: WebPushSubscription.Problem.p256dhWrongLength(64)) {
            try WebPushSubscription(json: Self.json(p256dh: Self.base64URL(Array(Self.browserKey.dropLast()))))
        }
        // The compressed form (33 bytes) is a valid key, but not what RFC 8291 takes.
        let compressed = Array(P256.KeyAgreement.PrivateKey().publicKey.compressedRepresentation)
        #expect(throws: WebPushSubscription.Problem.p256dhWrongLength(33)) {
            try WebPushSubscription(json: Self.json(p256dh: Self.base64URL(compressed)))
        }
        var notUncompressed = Self.browserKey
        notUncompressed[0] = 0x03
        #expect(throws: WebPushSubscription.Problem.p256dhNotUncompressedPoint) {
            try WebPushSubscription(json: Self.json(p256dh: Self.base64URL(notUncompressed)))
        }
        // y changed: (x, y) is no longer on the curve (only two y go with one x).
        var offCurve = Self.browserKey
        offCurve[64] ^= 0x01
        #expect(throws: WebPushSubscription.Problem.p256dhNotOnCurve) {
            try WebPushSubscription(json: Self.json(p256dh: Self.base64URL(offCurve)))
        }
        #expect(throws: WebPushSubscription.Problem.p256dhNotOnCurve) {
            try WebPushSubscription(json: Self.json(p256dh: Self.base64URL([0x04] + Array(repeating: 0, count: 64))))
        }
        #expect(throws: WebPushSubscription.Problem.p256dhNotBase64URL) {
            try WebPushSubscription(json: Self.json(p256dh: "not a key!"))
        }
    }

    @Test("auth must be 16 bytes")
    func authSecrets() {
        #expect(throws: WebPushSubscription.Problem.authWrongLength(15)) {
            try WebPushSubscription(json: Self.json(auth: Self.base64URL(Array(0..<15))))
        }
        #expect(throws: WebPushSubscription.Problem.authWrongLength(32)) {
            try WebPushSubscription(json: Self.json(auth: Self.base64URL(Array(0..<32))))
        }
        #expect(throws: WebPushSubscription.Problem.authWrongLength(0)) {
            try WebPushSubscription(json: Self.json(auth: ""))
        }
        #expect(throws: WebPushSubscription.Problem.authNotBase64URL) {
            try WebPushSubscription(json: Self.json(auth: "*"))
        }
    }

    @Test("JSON that is not a subscription says what is missing")
    func shape() {
        #expect(throws: WebPushSubscription.Problem.notSubscriptionJSON("keys.auth is missing")) {
            try WebPushSubscription(json: Data(#"{"endpoint": "https://push.example.com/a", "keys": {"p256dh": "x"}}"#.utf8))
        }
        #expect(throws: WebPushSubscription.Problem.notSubscriptionJSON("keys is missing")) {
            try WebPushSubscription(json: Data(#"{"endpoint": "https://push.example.com/a"}"#.utf8))
        }
        #expect(throws: WebPushSubscription.Problem.notSubscriptionJSON("endpoint has the wrong type")) {
            try WebPushSubscription(json: Data(#"{"endpoint": 5, "keys": {"p256dh": "x", "auth": "y"}}"#.utf8))
        }
        #expect(throws: WebPushSubscription.Problem.notSubscriptionJSON("not JSON")) {
            try WebPushSubscription(json: Data("endpoint=https://push.example.com".utf8))
        }
        #expect(throws: WebPushSubscription.Problem.badExpirationTime) {
            try WebPushSubscription(json: Self.json(expirationTime: "-1"))
        }
    }
}
