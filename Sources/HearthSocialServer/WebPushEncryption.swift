import Crypto
import Foundation

/// A push message's body encrypted for one browser, as RFC 8291 (Message Encryption for Web
/// Push) defines it over RFC 8188's `aes128gcm` content coding: an ephemeral P-256 key agreed
/// with the subscription's `p256dh` key, the subscription's `auth` secret mixed in with HKDF,
/// and the message sealed with AES-128-GCM as one record. The push service cannot read it; only
/// the browser holding the subscription's private key can.
///
/// Built from swift-crypto's primitives (P-256 ECDH, HKDF-SHA-256, AES-GCM); checked against
/// RFC 8291's own example (Appendix A) in the tests.
public enum WebPushEncryption {
    /// Why a message cannot be encrypted for a subscription.
    public enum Problem: Error, Equatable, CustomStringConvertible {
        /// The subscription's `p256dh` is not an uncompressed P-256 point.
        case badPublicKey
        /// The subscription's `auth` secret is not 16 bytes.
        case badAuthSecret
        /// The message does not fit one 4,096-byte record.
        case tooLarge(Int)

        public var description: String {
            switch self {
            case .badPublicKey: "the subscription's p256dh key is not an uncompressed P-256 public key"
            case .badAuthSecret: "the subscription's auth secret is not 16 bytes"
            case .tooLarge(let bytes): "a push message holds at most \(WebPushEncryption.maxPlaintextBytes) bytes, not \(bytes)"
            }
        }
    }

    /// The record size: one record holds the whole message (push services take 4,096 bytes).
    public static let recordSize = 4096
    /// What the header takes: salt (16), record size (4), key ID length (1), the key (65).
    static let headerBytes = 16 + 4 + 1 + 65
    /// The most a message may be: a record less its padding delimiter and tag, and the header.
    public static let maxPlaintextBytes = recordSize - headerBytes - 16 - 1

    /// The `aes128gcm` body of `plaintext` for the browser whose subscription has `p256dh`
    /// (65 bytes) and `auth` (16 bytes). `serverKey` and `salt` are fresh for each message;
    /// tests pass RFC 8291's.
    public static func encrypt(
        _ plaintext: [UInt8], p256dh: [UInt8], auth: [UInt8],
        serverKey: P256.KeyAgreement.PrivateKey = P256.KeyAgreement.PrivateKey(),
        salt: [UInt8] = (0..<16).map { _ in UInt8.random(in: .min ... .max) }
    ) throws -> [UInt8] {
        guard plaintext.count <= maxPlaintextBytes else { throw Problem.tooLarge(plaintext.count) }
        guard auth.count == 16 else { throw Problem.badAuthSecret }
        guard p256dh.count == 65, p256dh.first == 0x04, let browserKey = try? P256.KeyAgreement.PublicKey(x963Representation: p256dh)
        else { throw Problem.badPublicKey }
        let serverPublic = Array(serverKey.publicKey.x963Representation)
        let shared = try serverKey.sharedSecretFromKeyAgreement(with: browserKey)

        // RFC 8291 §3.4: the input keying material from the ECDH secret and the auth secret.
        let keyInfo = Array("WebPush: info".utf8) + [0] + p256dh + serverPublic
        let inputKey = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: auth, sharedInfo: keyInfo, outputByteCount: 32)
        // RFC 8188 §2.2 and §2.3: the content encryption key and nonce from the salt.
        let contentKey = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKey, salt: salt, info: Array("Content-Encoding: aes128gcm".utf8) + [0], outputByteCount: 16)
        let nonceBytes = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: inputKey, salt: salt, info: Array("Content-Encoding: nonce".utf8) + [0], outputByteCount: 12)
        // One record, the last: the message, then the delimiter 2 (RFC 8188 §2).
        let sealed = try AES.GCM.seal(
            plaintext + [2], using: contentKey, nonce: AES.GCM.Nonce(data: nonceBytes.withUnsafeBytes { Array($0) }))

        var body = salt
        body += withUnsafeBytes(of: UInt32(recordSize).bigEndian) { Array($0) }
        body.append(UInt8(serverPublic.count))
        body += serverPublic
        body += sealed.ciphertext
        body += sealed.tag
        return body
    }
}
