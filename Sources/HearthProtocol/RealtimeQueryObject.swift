import HearthCore

/// The realtime protocol's query object (docs/protocol.md §8; the SDKs' `QueryParams`), read into a
/// ``HearthCore/Query``: `i` the index (`.key`, `.value`, `.priority`, or a child path; absent
/// means priority), `sp`/`sn` the start value and key, `ep`/`en` the end, `sin`/`ein` whether
/// they are included (newer SDKs), `l` the limit and `vf` which end it counts from (`l`, `r`).
///
/// Older SDKs write `startAfter(v)` as a start at `v` with the key `[MAX_NAME]`, and
/// `endBefore(v)` as an end at `v` with the key `[MIN_NAME]`: the names that sort after and
/// before every key.
public enum RealtimeQueryObject {
    static let minName = "[MIN_NAME]"
    static let maxName = "[MAX_NAME]"

    /// The query the JSON object in `bytes` describes; nil for an empty object (a plain listen).
    public static func query(from bytes: some Collection<UInt8>) throws(RealtimeProtocolError) -> Query? {
        let members: [(key: String, value: Range<Int>)]
        do {
            members = try JSONParser.members(ofObject: bytes)
        } catch {
            throw .malformed("A query must be a JSON object.")
        }
        guard !members.isEmpty else { return nil }
        let buffer = Array(bytes)
        var fields: [String: Node] = [:]
        for member in members {
            // Read one by one: a null bound (startAt() on the priority index) must stay present.
            guard let value = try? JSONParser.parse(buffer[member.value]).node else {
                throw .malformed("Invalid query field \(member.key).")
            }
            fields[member.key] = value
        }
        let order = try self.order(fields["i"] ?? .null)
        var query = Query(order: order)
        query.start = try bound(
            value: fields["sp"], key: fields["sn"] ?? .null, inclusive: fields["sin"] ?? .null, isStart: true, order: order)
        query.end = try bound(
            value: fields["ep"], key: fields["en"] ?? .null, inclusive: fields["ein"] ?? .null, isStart: false, order: order)
        switch fields["l"] ?? .null {
        case .null: break
        case .int(let count) where count >= 0 && count <= Int64(Int32.max):
            let fromLeft: Bool
            switch fields["vf"] ?? .null {
            case .string("l"): fromLeft = true
            case .string("r"): fromLeft = false
            // As the SDKs decide when no side is named: from the start if one is set.
            case .null: fromLeft = query.start != nil
            default: throw .malformed("vf must be \"l\" or \"r\".")
            }
            query.limit = fromLeft ? .first(Int(count)) : .last(Int(count))
        default: throw .malformed("l must be a non-negative integer.")
        }
        return query
    }

    private static func order(_ index: Node) throws(RealtimeProtocolError) -> Query.Order {
        switch index {
        case .null, .string(".priority"): return .priority
        case .string(".key"): return .key
        case .string(".value"): return .value
        case .string(let name):
            guard let path = try? Path(parsing: name), !path.isRoot else { throw .malformed("Invalid index \(name).") }
            return .child(path)
        default: throw .malformed("i must be a string.")
        }
    }

    private static func bound(
        value: Node?, key: Node, inclusive: Node, isStart: Bool, order: Query.Order
    ) throws(RealtimeProtocolError) -> Query.Bound? {
        guard let value else { return nil }
        guard value.children == nil, value.priority == nil else { throw .malformed("A query bound must be a primitive value.") }
        if case .key = order, case .string = value {} else if case .key = order {
            throw .malformed("A key index bound must be a string.")
        }
        var included: Bool
        switch inclusive {
        case .null: included = true
        case .bool(let flag): included = flag
        default: throw .malformed("sin and ein must be booleans.")
        }
        var boundKey: ChildKey?
        switch key {
        case .null: break
        // Past every key at the start, or before every key at the end: the value's children are out.
        case .string(maxName) where isStart, .string(minName) where !isStart: included = false
        case .string(minName), .string(maxName): break
        case .string(let name): boundKey = ChildKey(name)
        default: throw .malformed("sn and en must be strings.")
        }
        return Query.Bound(value: value, key: boundKey, inclusive: included)
    }
}
