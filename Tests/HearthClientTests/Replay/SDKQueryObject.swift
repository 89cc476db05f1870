/// A query object as the official JS SDK 9.8.1 writes it on the wire, from the one Hearth's
/// client writes, so the scripted server can tell that two requests listen to the same query.
///
/// Hearth's client says an exclusive bound as it is (`sin`/`ein` false); the SDK has no such
/// field and moves the bound instead: past the key (`successor`), or to `[MAX_NAME]` /
/// `[MIN_NAME]` when there is no key, and for an order by key, to the next or previous
/// possible key (`successor` / `predecessor` of the value). Inclusive bounds are the same
/// in both but for the SDK's leaving `sin`/`ein` out.
enum SDKQueryObject {
    static let maxName = "[MAX_NAME]"
    static let minName = "[MIN_NAME]"
    /// The characters of push IDs, in order (Firebase's `PUSH_CHARS`).
    static let pushCharacters = Array("-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz")
    static let maxKeyLength = 786

    /// The SDK's form of `query` (a Hearth client's `q`).
    static func from(_ query: JSONValue) -> JSONValue {
        guard case .object(var members) = query else { return query }
        let byKey = members["i"]?.string == ".key"
        if members.removeValue(forKey: "sin") == .bool(false) {
            if byKey, let value = members["sp"]?.string {
                members["sp"] = .string(successor(value))
            } else {
                members["sn"] = .string(members["sn"]?.string.map(successor) ?? maxName)
            }
        }
        if members.removeValue(forKey: "ein") == .bool(false) {
            if byKey, let value = members["ep"]?.string {
                members["ep"] = .string(predecessor(value))
            } else {
                members["en"] = .string(members["en"]?.string.map(predecessor) ?? minName)
            }
        }
        return .object(members)
    }

    /// The next possible key after `key` (the SDK's `successor`).
    static func successor(_ key: String) -> String {
        if key == String(Int32.max) { return maxName }
        if let number = integer(key) { return String(number + 1) }
        var next = Array(key)
        if next.count < maxKeyLength { return key + "-" }
        var index = next.count - 1
        while index >= 0, next[index] == "z" { index -= 1 }
        guard index >= 0, let position = pushCharacters.firstIndex(of: next[index]) else { return maxName }
        next[index] = pushCharacters[position + 1]
        return String(next[...index])
    }

    /// The previous possible key before `key` (the SDK's `predecessor`).
    static func predecessor(_ key: String) -> String {
        if key == String(Int32.min) { return minName }
        if let number = integer(key) { return String(number - 1) }
        var next = Array(key)
        if next.last == "-" {
            if next.count == 1 { return String(Int32.max) }
            next.removeLast()
            return String(next)
        }
        guard let last = next.last, let position = pushCharacters.firstIndex(of: last), position > 0 else { return key }
        next[next.count - 1] = pushCharacters[position - 1]
        return String(next) + String(repeating: "z", count: maxKeyLength - next.count)
    }

    /// `key` as a 32-bit integer when the SDK reads it as one (`^-?(0*)\d{1,10}$`, in range).
    static func integer(_ key: String) -> Int64? {
        var digits = Substring(key)
        if digits.first == "-" { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
        let significant = digits.drop { $0 == "0" }
        guard significant.count <= 10, let value = Int64(key) else { return nil }
        return value >= Int64(Int32.min) && value <= Int64(Int32.max) ? value : nil
    }
}
