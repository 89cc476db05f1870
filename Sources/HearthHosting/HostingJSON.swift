import Foundation

/// A JSON value as `firebase.json` holds it, keeping booleans apart from numbers (so `"cleanUrls": 1`
/// is a wrong type, not true). Read as JSON5, as the Firebase CLI reads `firebase.json` with
/// comments allowed.
indirect enum HostingJSON: Decodable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([HostingJSON])
    case object([String: HostingJSON])

    init(from decoder: any Decoder) throws {
        if var list = try? decoder.unkeyedContainer() {
            var items: [HostingJSON] = []
            while !list.isAtEnd { items.append(try list.decode(HostingJSON.self)) }
            self = .array(items)
            return
        }
        if let object = try? decoder.container(keyedBy: AnyKey.self) {
            var members: [String: HostingJSON] = [:]
            for key in object.allKeys { members[key.stringValue] = try object.decode(HostingJSON.self, forKey: key) }
            self = .object(members)
            return
        }
        let value = try decoder.singleValueContainer()
        if value.decodeNil() {
            self = .null
        } else if let bool = try? value.decode(Bool.self) {
            self = .bool(bool)
        } else if let number = try? value.decode(Double.self) {
            self = .number(number)
        } else {
            self = .string(try value.decode(String.self))
        }
    }

    /// Reads `bytes` as JSON5.
    static func parse(_ bytes: [UInt8]) throws(HostingConfigurationError) -> HostingJSON {
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        do {
            return try decoder.decode(HostingJSON.self, from: Data(bytes))
        } catch let DecodingError.dataCorrupted(context) {
            let detail = (context.underlyingError as? NSError)?.userInfo[NSDebugDescriptionErrorKey] as? String ?? context.debugDescription
            throw HostingConfigurationError(.invalidJSON, at: "", "firebase.json is not valid JSON: \(detail)")
        } catch {
            throw HostingConfigurationError(.invalidJSON, at: "", "firebase.json is not valid JSON: \(error)")
        }
    }

    /// The JSON type's name, for messages.
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
