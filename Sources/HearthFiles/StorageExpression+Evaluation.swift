import Foundation
import Synchronization

/// Why an expression failed at run time; a rule whose condition fails grants nothing.
public struct StorageRuleError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public let position: SourcePosition?

    public var description: String { position.map { "\($0): \(message)" } ?? message }
}

/// What names mean while a condition is evaluated: variables (which may hold an error that
/// only matters if read, as function arguments do) and the functions in reach.
struct StorageScope {
    var variables: [String: Result<StorageValue, StorageRuleError>]
    var functions: [String: StorageRulesDocument.Function]
    var depth = 0

    static let maxCallDepth = 20
}

extension StorageExpression {
    /// The value of this expression, or the error that stops it.
    func value(in scope: StorageScope) throws(StorageRuleError) -> StorageValue {
        switch self {
        case .literal(let value):
            return value
        case .variable(let name, let position):
            guard let bound = scope.variables[name] else { throw StorageRuleError(message: "Unknown variable '\(name)'.", position: position) }
            return try bound.get()
        case .list(let items):
            var values: [StorageValue] = []
            for item in items { values.append(try item.value(in: scope)) }
            return .list(values)
        case .map(let entries):
            var values: [String: StorageValue] = [:]
            for entry in entries { values[entry.key] = try entry.value.value(in: scope) }
            return .map(values)
        case .member(let object, let name, let position):
            return try Self.member(name, of: try object.value(in: scope), at: position)
        case .index(let object, let index, let position):
            return try Self.index(try object.value(in: scope), try index.value(in: scope), at: position)
        case .slice(let object, let start, let end, let position):
            return try Self.slice(
                try object.value(in: scope), try start?.value(in: scope), try end?.value(in: scope), at: position)
        case .call(let names, let arguments, let position):
            return try Self.call(names, arguments, in: scope, at: position)
        case .method(let object, let name, let arguments, let position):
            let target = try object.value(in: scope)
            var values: [StorageValue] = []
            for argument in arguments { values.append(try argument.value(in: scope)) }
            return try Self.method(name, on: target, values, at: position)
        case .unary(let op, let operand, let position):
            let value = try operand.value(in: scope)
            switch (op, value) {
            case ("!", .bool(let flag)): return .bool(!flag)
            case ("-", .int(let number)):
                guard number != .min else { throw StorageRuleError(message: "Integer overflow.", position: position) }
                return .int(-number)
            case ("-", .float(let number)): return .float(-number)
            case ("-", .duration(let nanos)):
                guard nanos != .min else { throw StorageRuleError(message: "Integer overflow.", position: position) }
                return .duration(-nanos)
            default: throw StorageRuleError(message: "Unsupported operation error: \(op)\(value.typeName).", position: position)
            }
        case .binary(let op, let lhs, let rhs, let position):
            return try Self.binary(op, lhs, rhs, in: scope, at: position)
        case .isType(let operand, let type, let position):
            let value = try operand.value(in: scope)
            switch type {
            case "number": if case .int = value { return .bool(true) } else if case .float = value { return .bool(true) } else { return .bool(false) }
            case "bool", "int", "float", "string", "list", "map", "path", "timestamp", "duration", "null":
                return .bool(value.typeName == type)
            case "latlng", "bytes", "set", "constraint": return .bool(false)
            default: throw StorageRuleError(message: "Unknown type '\(type)'.", position: position)
            }
        case .conditional(let condition, let then, let otherwise, let position):
            guard case .bool(let flag) = try condition.value(in: scope) else {
                throw StorageRuleError(message: "The condition of ?: must be a bool.", position: position)
            }
            return try (flag ? then : otherwise).value(in: scope)
        }
    }

    // MARK: - Operators

    private static func binary(
        _ op: String, _ lhs: StorageExpression, _ rhs: StorageExpression, in scope: StorageScope, at position: SourcePosition
    ) throws(StorageRuleError) -> StorageValue {
        switch op {
        case "&&", "||":
            // An error on one side is absorbed when the other side decides: error && false is
            // false, error || true is true.
            let decisive = op == "||"
            let left: Result<StorageValue, StorageRuleError> = Result { () throws(StorageRuleError) in try lhs.value(in: scope) }
            if case .success(.bool(let flag)) = left {
                if flag == decisive { return .bool(decisive) }
                return try boolean(try rhs.value(in: scope), op, at: position)
            }
            let right = Result { () throws(StorageRuleError) in try rhs.value(in: scope) }
            if case .success(.bool(decisive)) = right { return .bool(decisive) }
            if case .failure(let error) = left { throw error }
            throw StorageRuleError(message: "Unsupported operation error: \(op) needs bools.", position: position)
        default:
            break
        }
        let left = try lhs.value(in: scope)
        let right = try rhs.value(in: scope)
        func unsupported() -> StorageRuleError {
            StorageRuleError(message: "Unsupported operation error: \(left.typeName) \(op) \(right.typeName).", position: position)
        }
        switch op {
        case "==": return .bool(left.isEqual(to: right))
        case "!=": return .bool(!left.isEqual(to: right))
        case "in":
            switch right {
            case .list(let items): return .bool(items.contains { $0.isEqual(to: left) })
            case .map(let entries):
                guard case .string(let key) = left else { return .bool(false) }
                return .bool(entries[key] != nil)
            default: throw unsupported()
            }
        case "<", "<=", ">", ">=":
            guard let order = compare(left, right) else { throw unsupported() }
            switch op {
            case "<": return .bool(order < 0)
            case "<=": return .bool(order <= 0)
            case ">": return .bool(order > 0)
            default: return .bool(order >= 0)
            }
        default:
            return try arithmetic(op, left, right, unsupported: unsupported, at: position)
        }
    }

    private static func boolean(_ value: StorageValue, _ op: String, at position: SourcePosition) throws(StorageRuleError) -> StorageValue {
        guard case .bool = value else { throw StorageRuleError(message: "Unsupported operation error: \(op) needs bools.", position: position) }
        return value
    }

    /// -1, 0 or 1 for values that have an order (numbers, strings, timestamps, durations).
    static func compare(_ left: StorageValue, _ right: StorageValue) -> Int? {
        func order<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a == b ? 0 : 1) }
        switch (left, right) {
        case (.int(let a), .int(let b)): return order(a, b)
        case (.int(let a), .float(let b)): return order(Double(a), b)
        case (.float(let a), .int(let b)): return order(a, Double(b))
        case (.float(let a), .float(let b)): return order(a, b)
        case (.string(let a), .string(let b)):
            return a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars) ? -1 : (a == b ? 0 : 1)
        case (.timestamp(let a), .timestamp(let b)), (.duration(let a), .duration(let b)): return order(a, b)
        default: return nil
        }
    }

    private static func arithmetic(
        _ op: String, _ left: StorageValue, _ right: StorageValue, unsupported: () -> StorageRuleError, at position: SourcePosition
    ) throws(StorageRuleError) -> StorageValue {
        func overflow() -> StorageRuleError { StorageRuleError(message: "Integer overflow.", position: position) }
        switch (left, right) {
        case (.int(let a), .int(let b)):
            switch op {
            case "+": let (r, o) = a.addingReportingOverflow(b); if o { throw overflow() }; return .int(r)
            case "-": let (r, o) = a.subtractingReportingOverflow(b); if o { throw overflow() }; return .int(r)
            case "*": let (r, o) = a.multipliedReportingOverflow(by: b); if o { throw overflow() }; return .int(r)
            case "/", "%":
                guard b != 0 else { throw StorageRuleError(message: "Divide by zero error.", position: position) }
                guard !(a == .min && b == -1) else { throw overflow() }
                // Truncated toward zero; the remainder takes the dividend's sign.
                return .int(op == "/" ? a / b : a % b)
            default: throw unsupported()
            }
        case (.int, .float), (.float, .int), (.float, .float):
            let a = number(left)!
            let b = number(right)!
            switch op {
            case "+": return .float(a + b)
            case "-": return .float(a - b)
            case "*": return .float(a * b)
            case "/": return .float(a / b)
            case "%":
                guard b != 0 else { throw StorageRuleError(message: "Divide by zero error.", position: position) }
                return .float(a.truncatingRemainder(dividingBy: b))
            default: throw unsupported()
            }
        case (.string(let a), .string(let b)) where op == "+": return .string(a + b)
        case (.list(let a), .list(let b)) where op == "+": return .list(a + b)
        // Nanoseconds in 64 bits: a result past them is an error, as integer overflow is.
        case (.timestamp(let t), .duration(let d)) where op == "+" || op == "-":
            let (r, o) = op == "+" ? t.addingReportingOverflow(d) : t.subtractingReportingOverflow(d)
            if o { throw overflow() }
            return .timestamp(r)
        case (.duration(let d), .timestamp(let t)) where op == "+":
            let (r, o) = t.addingReportingOverflow(d)
            if o { throw overflow() }
            return .timestamp(r)
        case (.timestamp(let a), .timestamp(let b)) where op == "-":
            let (r, o) = a.subtractingReportingOverflow(b)
            if o { throw overflow() }
            return .duration(r)
        case (.duration(let a), .duration(let b)) where op == "+" || op == "-":
            let (r, o) = op == "+" ? a.addingReportingOverflow(b) : a.subtractingReportingOverflow(b)
            if o { throw overflow() }
            return .duration(r)
        default: throw unsupported()
        }
    }

    static func number(_ value: StorageValue) -> Double? {
        switch value {
        case .int(let a): Double(a)
        case .float(let a): a
        default: nil
        }
    }

    // MARK: - Fields and indexes

    private static func member(_ name: String, of object: StorageValue, at position: SourcePosition) throws(StorageRuleError) -> StorageValue {
        switch object {
        case .map(let entries):
            guard let value = entries[name] else {
                throw StorageRuleError(message: "Property \(name) is undefined on object.", position: position)
            }
            return value
        case .null: throw StorageRuleError(message: "Null value error (reading .\(name)).", position: position)
        default: throw StorageRuleError(message: "A \(object.typeName) has no field '\(name)'.", position: position)
        }
    }

    private static func index(_ object: StorageValue, _ index: StorageValue, at position: SourcePosition) throws(StorageRuleError) -> StorageValue {
        func outOfRange() -> StorageRuleError { StorageRuleError(message: "Index out of range.", position: position) }
        switch (object, index) {
        case (.map, .string(let key)): return try member(key, of: object, at: position)
        case (.list(let items), .int(let i)):
            guard i >= 0, i < items.count else { throw outOfRange() }
            return items[Int(i)]
        case (.path(let segments), .int(let i)):
            guard i >= 0, i < segments.count else { throw outOfRange() }
            return .string(segments[Int(i)])
        case (.string(let text), .int(let i)):
            let characters = Array(text)
            guard i >= 0, i < characters.count else { throw outOfRange() }
            return .string(String(characters[Int(i)]))
        case (.null, _): throw StorageRuleError(message: "Null value error.", position: position)
        default: throw StorageRuleError(message: "Cannot index a \(object.typeName) with a \(index.typeName).", position: position)
        }
    }

    private static func slice(
        _ object: StorageValue, _ start: StorageValue?, _ end: StorageValue?, at position: SourcePosition
    ) throws(StorageRuleError) -> StorageValue {
        func bounds(_ count: Int) throws(StorageRuleError) -> Range<Int> {
            var lower = 0
            var upper = count
            if let start {
                guard case .int(let value) = start else { throw StorageRuleError(message: "A range needs ints.", position: position) }
                lower = Int(value)
            }
            if let end {
                guard case .int(let value) = end else { throw StorageRuleError(message: "A range needs ints.", position: position) }
                upper = Int(value)
            }
            guard lower >= 0, upper <= count, lower <= upper else {
                throw StorageRuleError(message: "Index out of range.", position: position)
            }
            return lower..<upper
        }
        switch object {
        case .list(let items): return .list(Array(items[try bounds(items.count)]))
        case .string(let text):
            let characters = Array(text)
            return .string(String(characters[try bounds(characters.count)]))
        case .path(let segments): return .path(Array(segments[try bounds(segments.count)]))
        default: throw StorageRuleError(message: "Cannot take a range of a \(object.typeName).", position: position)
        }
    }
}
