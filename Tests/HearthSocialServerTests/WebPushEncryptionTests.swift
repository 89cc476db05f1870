import Crypto
import Foundation
import HearthSocialServer
import Testing

/// RFC 8291's message encryption, against the RFC's own example and its refusals.
@Suite("Web Push message encryption (RFC 8291)")
struct WebPushEncryptionTests {
    static func bytes(_ base64URL: String) -> [UInt8] {
        var text = base64URL.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        return Array(Data(base64Encoded: text)!)
    }

    static let browserPublic = bytes("BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4")
    static let browserPrivate = bytes("q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94")
    static let auth = bytes("BTBZMqHH6r4Tts7J_aSIgg")

    @Test("RFC 8291 Appendix A: the same keys and salt give the RFC's body, byte for byte")
    func rfcExample() throws {
        let serverKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: Self.bytes("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"))
        let body = try WebPushEncryption.encrypt(
            Array("When I grow up, I want to be a watermelon".utf8), p256dh: Self.browserPublic, auth: Self.auth,
            serverKey: serverKey, salt: Self.bytes("DGv6ra1nlYgDCS1FRnbzlw"))
        #expect(body == Self.bytes(
            "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"))
    }

    @Test("Each message has a fresh key and salt: two encryptions of one message differ")
    func freshEachTime() throws {
        let message = Array("Ann liked your photo".utf8)
        let first = try WebPushEncryption.encrypt(message, p256dh: Self.browserPublic, auth: Self.auth)
        let second = try WebPushEncryption.encrypt(message, p256dh: Self.browserPublic, auth: Self.auth)
        #expect(first != second)
        #expect(first.count == 86 + message.count + 1 + 16)
    }

    @Test("A bad key, a bad secret or a message over one record is refused")
    func refusals() {
        let message = Array("hi".utf8)
        #expect(throws: WebPushEncryption.Problem.badPublicKey) {
            try WebPushEncryption.encrypt(message, p256dh: Array(Self.browserPublic.dropLast()), auth: Self.auth)
        }
        var offCurve = Self.browserPublic
        offCurve[40] ^= 0xFF
        #expect(throws: WebPushEncryption.Problem.badPublicKey) {
            try WebPushEncryption.encrypt(message, p256dh: offCurve, auth: Self.auth)
        }
        #expect(throws: WebPushEncryption.Problem.badAuthSecret) {
            try WebPushEncryption.encrypt(message, p256dh: Self.browserPublic, auth: Array(Self.auth.prefix(8)))
        }
        let large = [UInt8](repeating: 0x61, count: WebPushEncryption.maxPlaintextBytes + 1)
        #expect(throws: WebPushEncryption.Problem.tooLarge(large.count)) {
            try WebPushEncryption.encrypt(large, p256dh: Self.browserPublic, auth: Self.auth)
        }
        #expect(throws: Never.self) {
            try WebPushEncryption.encrypt(Array(large.dropLast()), p256dh: Self.browserPublic, auth: Self.auth)
        }
    }
}
