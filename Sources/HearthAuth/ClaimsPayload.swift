import HearthCore
import JWTKit

/// A JWT payload made of any claims, for signing: the claims are a JSON object as a ``Node``.
struct ClaimsPayload: JWTPayload {
    let claims: Node
    /// Paths (such as `["firebase", "identities"]`) written as `{}` when the claims have
    /// nothing there: a ``Node`` cannot hold an empty object, but Firebase's tokens do.
    let emptyObjects: [[String]]

    init(_ claims: Node, emptyObjects: [[String]] = []) {
        self.claims = claims
        self.emptyObjects = emptyObjects
    }

    init(from decoder: any Decoder) throws {
        // Hearth reads verified claims with its own JSON parser (see TokenIssuer); this type
        // is only ever encoded.
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "ClaimsPayload is encode-only"))
    }

    func encode(to encoder: any Encoder) throws {
        try Self.encode(claims, emptyObjects: emptyObjects, to: encoder)
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {}

    private struct Key: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    private static func encode(_ node: Node, emptyObjects: [[String]] = [], to encoder: any Encoder) throws {
        if let children = node.children, let length = JSONWriter.arrayLength(children) {
            // Lists render as JSON arrays, as the REST API renders them (roles: ["a", "b"]).
            var container = encoder.unkeyedContainer()
            var next = 0
            for (key, child) in children {
                while next < key.arrayIndex! {
                    try container.encodeNil()
                    next += 1
                }
                try encode(child, to: container.superEncoder())
                next += 1
            }
            assert(next == length)
            return
        }
        if let children = node.children {
            var container = encoder.container(keyedBy: Key.self)
            for (key, child) in children {
                let below = emptyObjects.filter { $0.first == key.string }.map { Array($0.dropFirst()) }.filter { !$0.isEmpty }
                try encode(child, emptyObjects: below, to: container.superEncoder(forKey: Key(stringValue: key.string)))
            }
            for path in emptyObjects where path.count == 1 && node.child(ChildKey(path[0])).isNull {
                _ = container.nestedContainer(keyedBy: Key.self, forKey: Key(stringValue: path[0]))
            }
            return
        }
        var container = encoder.singleValueContainer()
        switch node.unprioritized {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .string(let text): try container.encode(text)
        case .object, .prioritized: try container.encodeNil()
        }
    }
}

/// The registered claims Hearth checks itself after jwt-kit has checked a signature.
struct RegisteredClaims: JWTPayload {
    var iss: String?
    var aud: String?
    var sub: String?
    var exp: Double?
    var iat: Double?

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
