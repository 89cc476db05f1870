import HearthCore
import HearthEngine

/// Reads a REST query (`orderBy`, `startAt`, `endAt`, `equalTo`, `startAfter`, `endBefore`,
/// `limitToFirst`, `limitToLast`) from URL parameters, with Firebase's 400 texts.
enum QueryParameters {
    static let filterNames = ["startAt", "endAt", "equalTo", "startAfter", "endBefore", "limitToFirst", "limitToLast"]

    /// The query the parameters describe, or nil when they describe none.
    static func parse(_ parameters: [String: String]) throws(HearthError) -> Query? {
        let hasFilter = filterNames.contains { parameters[$0] != nil }
        if parameters["shallow"] == "true" && (hasFilter || parameters["orderBy"] != nil) {
            throw HearthError(.invalidQuery, "Mixing 'shallow' and querying parameters is not supported")
        }
        guard let orderText = parameters["orderBy"] else {
            if hasFilter {
                throw HearthError(.invalidQuery, "orderBy must be defined when other query parameters are defined")
            }
            return nil
        }
        let order = try parseOrder(orderText)
        var query = Query(order: order)

        if let text = parameters["startAt"] { query.start = try bound(text, order: order, inclusive: true) }
        if let text = parameters["startAfter"] { query.start = try bound(text, order: order, inclusive: false) }
        if let text = parameters["endAt"] { query.end = try bound(text, order: order, inclusive: true) }
        if let text = parameters["endBefore"] { query.end = try bound(text, order: order, inclusive: false) }
        if let text = parameters["equalTo"] {
            guard query.start == nil && query.end == nil else {
                throw HearthError(.invalidQuery, "equalTo cannot be combined with startAt, startAfter, endAt or endBefore")
            }
            let equal = try bound(text, order: order, inclusive: true)
            query.start = equal
            query.end = equal
        }
        let first = try parameters["limitToFirst"].map { (text) throws(HearthError) -> Int in try limit(text, name: "limitToFirst") }
        let last = try parameters["limitToLast"].map { (text) throws(HearthError) -> Int in try limit(text, name: "limitToLast") }
        switch (first, last) {
        case (.some, .some):
            throw HearthError(.invalidQuery, "limitToFirst and limitToLast cannot both be defined")
        case (let count?, nil): query.limit = .first(count)
        case (nil, let count?): query.limit = .last(count)
        case (nil, nil): break
        }
        return query
    }

    static func parseOrder(_ text: String) throws(HearthError) -> Query.Order {
        guard case .string(let name)? = try? JSONParser.parse(Array(text.utf8)).node else {
            throw HearthError(.invalidQuery, "orderBy must be a valid JSON encoded path")
        }
        switch name {
        case "$key": return .key
        case "$value": return .value
        case "$priority": return .priority
        default:
            guard let path = try? Path(parsing: name), !path.isRoot else {
                throw HearthError(.invalidQuery, "orderBy must be a valid JSON encoded path")
            }
            return .child(path)
        }
    }

    /// `value` or `value,key`, where both halves are JSON.
    static func bound(_ text: String, order: Query.Order, inclusive: Bool) throws(HearthError) -> Query.Bound {
        let (valueText, keyText) = splitValueAndKey(text)
        // Checked on the text: an empty object or array would parse as null.
        if let first = valueText.first(where: { !$0.isWhitespace }), first == "{" || first == "[" {
            throw HearthError(.invalidQuery, "Constraint index field must be a JSON primitive")
        }
        let value: Node
        do {
            let parsed = try JSONParser.parse(Array(valueText.utf8))
            value = parsed.node
        } catch {
            throw HearthError(.invalidQuery, "Constraint index field must be a JSON primitive")
        }
        guard value.children == nil, value.priority == nil else {
            throw HearthError(.invalidQuery, "Constraint index field must be a JSON primitive")
        }
        if case .key = order {
            guard case .string = value else {
                throw HearthError(.invalidQuery, "Provided key index type is invalid, must be string")
            }
        }
        var key: ChildKey?
        if let keyText {
            guard case .string(let name)? = try? JSONParser.parse(Array(keyText.utf8)).node else {
                throw HearthError(.invalidQuery, "Constraint key field must be a valid key name")
            }
            key = ChildKey(name)
        }
        return Query.Bound(value: value, key: key, inclusive: inclusive)
    }

    /// Splits `"a,b",  "key"` style text at the comma that ends the first JSON value.
    static func splitValueAndKey(_ text: String) -> (String, String?) {
        let bytes = Array(text.utf8)
        var index = 0
        while index < bytes.count && bytes[index] == UInt8(ascii: " ") { index += 1 }
        if index < bytes.count && bytes[index] == UInt8(ascii: "\"") {
            index += 1
            while index < bytes.count && bytes[index] != UInt8(ascii: "\"") {
                index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
            }
            index += 1
        }
        guard let comma = bytes[min(index, bytes.count)...].firstIndex(of: UInt8(ascii: ",")) else { return (text, nil) }
        return (String(decoding: bytes[..<comma], as: UTF8.self), String(decoding: bytes[(comma + 1)...], as: UTF8.self))
    }

    static func limit(_ text: String, name: String) throws(HearthError) -> Int {
        guard let count = Int(text), count >= 0 else {
            throw HearthError(.invalidQuery, "\(name) must be a non-negative integer")
        }
        return count
    }
}
