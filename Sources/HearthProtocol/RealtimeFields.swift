import HearthCore

/// The members of one JSON object inside a message, each read only when asked for.
public struct RealtimeFields: Sendable {
    private let bytes: [UInt8]
    private let members: [String: Range<Int>]
    private let what: String

    /// The members of the object at `range` of `bytes`; `what` names it in error messages.
    public init(_ bytes: [UInt8], in range: Range<Int>, what: String) throws(RealtimeProtocolError) {
        self.bytes = bytes
        self.what = what
        do {
            var members: [String: Range<Int>] = [:]
            for member in try JSONParser.members(ofObject: bytes[range]) {
                members[member.key] = (member.value.lowerBound + range.lowerBound)..<(member.value.upperBound + range.lowerBound)
            }
            self.members = members
        } catch {
            throw .malformed("The \(what) is not a JSON object.")
        }
    }

    private init(bytes: [UInt8], members: [String: Range<Int>], what: String) {
        self.bytes = bytes
        self.members = members
        self.what = what
    }

    /// An object with no members (a request without a body).
    public static func empty(_ bytes: [UInt8]) -> RealtimeFields { RealtimeFields(bytes: bytes, members: [:], what: "body") }

    private func raw(_ key: String) throws(RealtimeProtocolError) -> ArraySlice<UInt8> {
        guard let range = members[key] else { throw .malformed("The \(what) has no \(key).") }
        return bytes[range]
    }

    /// The value at `key`, parsed; throws when it is absent or not JSON.
    public func value(_ key: String) throws(RealtimeProtocolError) -> Node {
        let text = try raw(key)
        do {
            return try JSONParser.parse(text).node
        } catch {
            throw .malformed("\(key) of the \(what) is not valid data.")
        }
    }

    /// The value at `key`, parsed; nil when it is absent.
    public func optionalValue(_ key: String) throws(RealtimeProtocolError) -> Node? {
        members[key] == nil ? nil : try value(key)
    }

    /// The string at `key`; throws when it is absent or not a string.
    public func string(_ key: String) throws(RealtimeProtocolError) -> String {
        guard case .string(let text) = try value(key) else { throw .malformed("\(key) of the \(what) must be a string.") }
        return text
    }

    /// The string at `key`; nil when it is absent or null.
    public func optionalString(_ key: String) throws(RealtimeProtocolError) -> String? {
        guard let value = try optionalValue(key), !value.isNull else { return nil }
        guard case .string(let text) = value else { throw .malformed("\(key) of the \(what) must be a string.") }
        return text
    }

    /// The members of the object at `key`; throws when it is absent or not an object.
    public func object(_ key: String) throws(RealtimeProtocolError) -> RealtimeFields {
        guard let range = members[key] else { throw .malformed("The \(what) has no \(key).") }
        return try RealtimeFields(bytes, in: range, what: key)
    }

    /// The members of the object at `key`; nil when it is absent.
    public func optionalObject(_ key: String) throws(RealtimeProtocolError) -> RealtimeFields? {
        members[key] == nil ? nil : try object(key)
    }

    /// `p`, the location a request is about (`/a/b` or `a/b`); a write may name a priority
    /// (`/a/.priority`, the SDKs' `setPriority`).
    public func path(allowPriority: Bool = false) throws(RealtimeProtocolError) -> Path {
        let text = try string("p")
        guard let path = try? Path(parsing: text, allowPriority: allowPriority) else { throw .malformed("Invalid path \(text).") }
        return path
    }

    /// `d`, a value to write, in export format (priorities allowed), checked as REST checks bodies.
    func data() throws(RealtimeProtocolError) -> JSONParser.Parsed {
        let text = try raw("d")
        do {
            return try JSONParser.parse(text)
        } catch {
            throw .invalidData(error)
        }
    }

    /// `d` of a merge: relative paths and their values.
    func update() throws(RealtimeProtocolError) -> [(path: Path, value: JSONParser.Parsed)] {
        let text = try raw("d")
        do {
            return try JSONParser.parseUpdate(text)
        } catch {
            throw .invalidData(error)
        }
    }

    /// A listen's query (`q`) and tag (`t`).
    func view() throws(RealtimeProtocolError) -> RealtimeRequest.QueryView {
        guard let range = members["q"] else { return .whole }
        let query = try RealtimeQueryObject.query(from: bytes[range])
        var tag: Int64?
        if members["t"] != nil {
            guard case .int(let value) = try value("t") else { throw .malformed("t must be an integer tag.") }
            tag = value
        }
        return RealtimeRequest.QueryView(query: query, tag: tag, queryObject: query == nil ? nil : Array(bytes[range]))
    }
}
