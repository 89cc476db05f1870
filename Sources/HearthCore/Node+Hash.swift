import Foundation
import Crypto

extension Node {
    /// Firebase's node hash: base64 of the SHA-1 of a canonical text of the node, with children
    /// visited in priority order. Null hashes to `""`. REST uses it as the ETag and the
    /// WebSocket protocol for transactions.
    public var hash: String {
        switch self {
        case .null:
            return ""
        case .prioritized(let inner, let priority):
            return Self.digest(Self.priorityText(priority) + inner.unhashedText)
        default:
            return Self.digest(unhashedText)
        }
    }

    private var unhashedText: String {
        switch self {
        case .null, .prioritized:
            return ""
        case .bool(let value):
            return "boolean:" + (value ? "true" : "false")
        case .int(let value):
            return "number:" + Self.ieee754Hex(Double(value))
        case .double(let value):
            return "number:" + Self.ieee754Hex(value)
        case .string(let value):
            return "string:" + value
        case .object(let children):
            var text = ""
            for (key, child) in Self.priorityOrdered(children) {
                let childHash = child.hash
                if !childHash.isEmpty { text += ":" + key.string + ":" + childHash }
            }
            return text
        }
    }

    private static func digest(_ text: String) -> String {
        guard !text.isEmpty else { return "" }
        return Data(Insecure.SHA1.hash(data: Data(text.utf8))).base64EncodedString()
    }

    private static func priorityText(_ priority: Priority) -> String {
        switch priority {
        case .number(let value): return "priority:number:" + ieee754Hex(value) + ":"
        case .string(let value): return "priority:string:" + value + ":"
        }
    }

    static func ieee754Hex(_ value: Double) -> String {
        let bits = String(value.bitPattern, radix: 16)
        return String(repeating: "0", count: 16 - bits.count) + bits
    }

    /// Children sorted by priority (none, numbers, strings), ties broken by key.
    static func priorityOrdered(_ children: Children) -> [(key: ChildKey, value: Node)] {
        let entries = Array(children)
        guard entries.contains(where: { $0.value.priority != nil }) else { return entries }
        return entries.sorted { lhs, rhs in
            let order = SortValue.compare(SortValue(priority: lhs.value.priority), SortValue(priority: rhs.value.priority))
            return order != 0 ? order < 0 : ChildKey.compare(lhs.key, rhs.key) < 0
        }
    }
}
