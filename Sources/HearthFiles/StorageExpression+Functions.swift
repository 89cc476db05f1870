import Foundation
import Synchronization

extension StorageExpression {
    // MARK: - Calls

    static func call(
        _ names: [String], _ arguments: [StorageExpression], in scope: StorageScope, at position: SourcePosition
    ) throws(StorageRuleError) -> StorageValue {
        if names.count == 1, let function = scope.functions[names[0]] {
            return try callUser(function, arguments, in: scope, at: position)
        }
        var values: [StorageValue] = []
        for argument in arguments { values.append(try argument.value(in: scope)) }
        return try builtin(names.joined(separator: "."), values, at: position)
    }

    /// A rules function: arguments and `let` values are bound as results, so one that fails
    /// matters only if the body reads it.
    private static func callUser(
        _ function: StorageRulesDocument.Function, _ arguments: [StorageExpression], in scope: StorageScope,
        at position: SourcePosition
    ) throws(StorageRuleError) -> StorageValue {
        guard arguments.count == function.parameters.count else {
            throw StorageRuleError(
                message: "\(function.name)() takes \(function.parameters.count) argument(s), not \(arguments.count).", position: position)
        }
        guard scope.depth < StorageScope.maxCallDepth else {
            throw StorageRuleError(message: "Maximum function call depth exceeded.", position: position)
        }
        var inner = scope
        inner.depth += 1
        for (name, argument) in zip(function.parameters, arguments) {
            inner.variables[name] = Result { () throws(StorageRuleError) in try argument.value(in: scope) }
        }
        for binding in function.bindings {
            let bound = inner
            inner.variables[binding.name] = Result { () throws(StorageRuleError) in try binding.value.value(in: bound) }
        }
        return try function.body.value(in: inner)
    }

    private static func builtin(_ name: String, _ values: [StorageValue], at position: SourcePosition) throws(StorageRuleError) -> StorageValue {
        func fail(_ message: String) -> StorageRuleError { StorageRuleError(message: message, position: position) }
        func arguments(_ count: Int) throws(StorageRuleError) {
            guard values.count == count else { throw fail("\(name)() takes \(count) argument(s), not \(values.count).") }
        }
        func numberArgument() throws(StorageRuleError) -> Double {
            try arguments(1)
            guard let value = number(values[0]) else { throw fail("\(name)() needs a number.") }
            return value
        }
        switch name {
        case "int":
            try arguments(1)
            switch values[0] {
            case .int: return values[0]
            case .float(let value):
                guard value.isFinite, abs(value) < 9.2e18 else { throw fail("int() of \(value) is out of range.") }
                return .int(Int64(value))
            case .string(let text):
                guard let value = Int64(text) else { throw fail("int() cannot read '\(text)'.") }
                return .int(value)
            default: throw fail("int() cannot convert a \(values[0].typeName).")
            }
        case "float":
            try arguments(1)
            switch values[0] {
            case .int(let value): return .float(Double(value))
            case .float: return values[0]
            case .string(let text):
                guard let value = Double(text) else { throw fail("float() cannot read '\(text)'.") }
                return .float(value)
            default: throw fail("float() cannot convert a \(values[0].typeName).")
            }
        case "string":
            try arguments(1)
            switch values[0] {
            case .string: return values[0]
            case .int(let value): return .string(String(value))
            case .float(let value): return .string(value == value.rounded() && abs(value) < 1e15 ? String(format: "%.1f", value) : String(value))
            case .bool(let flag): return .string(flag ? "true" : "false")
            case .null: return .string("null")
            case .path(let segments): return .string("/" + segments.joined(separator: "/"))
            default: throw fail("string() cannot convert a \(values[0].typeName).")
            }
        case "bool":
            try arguments(1)
            switch values[0] {
            case .bool: return values[0]
            case .string("true"): return .bool(true)
            case .string("false"): return .bool(false)
            default: throw fail("bool() cannot convert \(values[0].typeName).")
            }
        case "path":
            try arguments(1)
            guard case .string(let text) = values[0] else { throw fail("path() needs a string.") }
            return .path(text.unicodeScalars.split(separator: "/").map(String.init))
        case "math.abs":
            try arguments(1)
            switch values[0] {
            case .int(let value):
                guard value != .min else { throw fail("Integer overflow.") }
                return .int(abs(value))
            case .float(let value): return .float(abs(value))
            default: throw fail("math.abs() needs a number.")
            }
        case "math.ceil", "math.floor", "math.round":
            let value = try numberArgument()
            let rounded = name == "math.ceil" ? value.rounded(.up) : name == "math.floor" ? value.rounded(.down) : value.rounded()
            guard rounded.isFinite, abs(rounded) < 9.2e18 else { throw fail("\(name)() is out of range.") }
            return .int(Int64(rounded))
        case "math.sqrt": return .float(try numberArgument().squareRoot())
        case "math.pow":
            try arguments(2)
            guard let base = number(values[0]), let exponent = number(values[1]) else { throw fail("math.pow() needs numbers.") }
            return .float(pow(base, exponent))
        case "math.isInfinite": return .bool(try numberArgument().isInfinite)
        case "math.isNaN": return .bool(try numberArgument().isNaN)
        case "timestamp.value":
            try arguments(1)
            guard case .int(let millis) = values[0] else { throw fail("timestamp.value() needs milliseconds as an int.") }
            // Timestamps are nanoseconds in 64 bits: the years 1677 to 2262.
            let (nanos, overflow) = millis.multipliedReportingOverflow(by: 1_000_000)
            guard !overflow else { throw fail("timestamp.value() is out of range.") }
            return .timestamp(nanos)
        case "timestamp.date":
            try arguments(3)
            guard case .int(let year) = values[0], case .int(let month) = values[1], case .int(let day) = values[2],
                let date = Self.utcDate(year: Int(year), month: Int(month), day: Int(day))
            else { throw fail("timestamp.date() needs a valid year, month and day.") }
            let seconds = date.timeIntervalSince1970
            guard abs(seconds) < 9.2e9 else { throw fail("timestamp.date() is out of range.") }
            return .timestamp(Int64(seconds) * 1_000_000_000)
        case "duration.value":
            try arguments(2)
            guard let amount = number(values[0]), case .string(let unit) = values[1] else {
                throw fail("duration.value() needs a number and a unit.")
            }
            let scale: Double
            switch unit {
            case "w": scale = 7 * 86_400e9
            case "d": scale = 86_400e9
            case "h": scale = 3_600e9
            case "m": scale = 60e9
            case "s": scale = 1e9
            case "ms": scale = 1e6
            case "ns": scale = 1
            default: throw fail("Unknown duration unit '\(unit)'.")
            }
            let nanos = amount * scale
            guard abs(nanos) < 9.2e18 else { throw fail("duration.value() is out of range.") }
            return .duration(Int64(nanos))
        case "duration.time":
            try arguments(4)
            var nanos: Int64 = 0
            for (value, scale) in zip(values, [3_600_000_000_000, 60_000_000_000, 1_000_000_000, 1] as [Int64]) {
                guard case .int(let part) = value else { throw fail("duration.time() needs ints.") }
                let (product, overflow) = part.multipliedReportingOverflow(by: scale)
                let (sum, sumOverflow) = nanos.addingReportingOverflow(product)
                guard !overflow, !sumOverflow else { throw fail("duration.time() is out of range.") }
                nanos = sum
            }
            return .duration(nanos)
        case "duration.abs":
            try arguments(1)
            guard case .duration(let nanos) = values[0] else { throw fail("duration.abs() needs a duration.") }
            guard nanos != .min else { throw fail("duration.abs() is out of range.") }
            return .duration(abs(nanos))
        default:
            if name.hasPrefix("firestore.") {
                throw fail("\(name)() is not available: Hearth has no Firestore.")
            }
            throw fail("Function not found error: \(name)().")
        }
    }

    private static func utcDate(year: Int, month: Int, day: Int) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: year, month: month, day: day)
        guard let date = calendar.date(from: components),
            calendar.component(.day, from: date) == day, calendar.component(.month, from: date) == month
        else { return nil }
        return date
    }

    // MARK: - Methods

    static func method(
        _ name: String, on target: StorageValue, _ values: [StorageValue], at position: SourcePosition
    ) throws(StorageRuleError) -> StorageValue {
        func fail(_ message: String) -> StorageRuleError { StorageRuleError(message: message, position: position) }
        func arguments(_ count: Int) throws(StorageRuleError) {
            guard values.count == count else { throw fail("\(name)() takes \(count) argument(s), not \(values.count).") }
        }
        func stringArgument(_ index: Int) throws(StorageRuleError) -> String {
            guard index < values.count, case .string(let text) = values[index] else { throw fail("\(name)() needs a string.") }
            return text
        }
        func listArgument() throws(StorageRuleError) -> [StorageValue] {
            try arguments(1)
            guard case .list(let items) = values[0] else { throw fail("\(name)() needs a list.") }
            return items
        }
        switch (target, name) {
        case (.null, _):
            throw fail("Null value error (calling \(name)()).")
        case (.string(let text), "size"):
            try arguments(0)
            return .int(Int64(text.count))
        case (.string(let text), "lower"):
            try arguments(0)
            return .string(text.lowercased())
        case (.string(let text), "upper"):
            try arguments(0)
            return .string(text.uppercased())
        case (.string(let text), "trim"):
            try arguments(0)
            return .string(text.trimmingCharacters(in: .whitespaces))
        case (.string(let text), "matches"):
            try arguments(1)
            let regex = try Self.regex(try stringArgument(0), at: position)
            let range = NSRange(text.startIndex..., in: text)
            return .bool(regex.firstMatch(in: text, options: [.anchored], range: range).map { $0.range == range } ?? false)
        case (.string(let text), "replace"):
            try arguments(2)
            let regex = try Self.regex(try stringArgument(0), at: position, anchored: false)
            let replacement = NSRegularExpression.escapedTemplate(for: try stringArgument(1))
            return .string(regex.stringByReplacingMatches(
                in: text, range: NSRange(text.startIndex..., in: text), withTemplate: replacement))
        case (.string(let text), "split"):
            try arguments(1)
            let regex = try Self.regex(try stringArgument(0), at: position, anchored: false)
            var parts: [StorageValue] = []
            var start = text.startIndex
            for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                guard let range = Range(match.range, in: text), !range.isEmpty else { continue }
                parts.append(.string(String(text[start..<range.lowerBound])))
                start = range.upperBound
            }
            parts.append(.string(String(text[start...])))
            return .list(parts)
        case (.list(let items), "size"):
            try arguments(0)
            return .int(Int64(items.count))
        case (.list(let items), "hasAll"):
            let wanted = try listArgument()
            return .bool(wanted.allSatisfy { item in items.contains { $0.isEqual(to: item) } })
        case (.list(let items), "hasAny"):
            let wanted = try listArgument()
            return .bool(wanted.contains { item in items.contains { $0.isEqual(to: item) } })
        case (.list(let items), "hasOnly"):
            let allowed = try listArgument()
            return .bool(items.allSatisfy { item in allowed.contains { $0.isEqual(to: item) } })
        case (.list(let items), "concat"):
            return .list(items + (try listArgument()))
        case (.list(let items), "removeAll"):
            let removed = try listArgument()
            return .list(items.filter { item in !removed.contains { $0.isEqual(to: item) } })
        case (.list(let items), "toSet"):
            try arguments(0)
            var unique: [StorageValue] = []
            for item in items where !unique.contains(where: { $0.isEqual(to: item) }) { unique.append(item) }
            return .list(unique)
        case (.list(let items), "join"):
            try arguments(1)
            let separator = try stringArgument(0)
            var parts: [String] = []
            for item in items {
                guard case .string(let text) = item else { throw fail("join() needs a list of strings.") }
                parts.append(text)
            }
            return .string(parts.joined(separator: separator))
        case (.map(let entries), "size"):
            try arguments(0)
            return .int(Int64(entries.count))
        case (.map(let entries), "keys"):
            try arguments(0)
            return .list(entries.keys.sorted().map(StorageValue.string))
        case (.map(let entries), "values"):
            try arguments(0)
            return .list(entries.keys.sorted().map { entries[$0]! })
        case (.map(let entries), "get"):
            try arguments(2)
            switch values[0] {
            case .string(let key): return entries[key] ?? values[1]
            case .list(let keys):
                var current = target
                for key in keys {
                    guard case .string(let key) = key, case .map(let level) = current, let next = level[key] else { return values[1] }
                    current = next
                }
                return current
            default: throw fail("get() needs a key or a list of keys.")
            }
        case (.path(let segments), "size"):
            try arguments(0)
            return .int(Int64(segments.count))
        case (.timestamp(let nanos), _):
            return try timestampMethod(name, nanos: nanos, values, fail: fail)
        case (.duration(let nanos), "seconds"):
            try arguments(0)
            return .int(nanos / 1_000_000_000)
        case (.duration(let nanos), "nanos"):
            try arguments(0)
            return .int(nanos % 1_000_000_000)
        default:
            throw fail("A \(target.typeName) has no method \(name)().")
        }
    }

    private static func timestampMethod(
        _ name: String, nanos: Int64, _ values: [StorageValue], fail: (String) -> StorageRuleError
    ) throws(StorageRuleError) -> StorageValue {
        guard values.isEmpty else { throw fail("\(name)() takes no arguments.") }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        // Whole seconds rounded down, and the nanoseconds past them (0 to 999,999,999).
        let remainder = nanos % 1_000_000_000
        let seconds = nanos / 1_000_000_000 - (remainder < 0 ? 1 : 0)
        let date = Date(timeIntervalSince1970: TimeInterval(seconds))
        switch name {
        case "toMillis": return .int(nanos / 1_000_000)
        case "year": return .int(Int64(calendar.component(.year, from: date)))
        case "month": return .int(Int64(calendar.component(.month, from: date)))
        case "day": return .int(Int64(calendar.component(.day, from: date)))
        case "hours": return .int(Int64(calendar.component(.hour, from: date)))
        case "minutes": return .int(Int64(calendar.component(.minute, from: date)))
        case "seconds": return .int(Int64(calendar.component(.second, from: date)))
        case "nanos": return .int(remainder < 0 ? remainder + 1_000_000_000 : remainder)
        case "dayOfYear": return .int(Int64(calendar.ordinality(of: .day, in: .year, for: date) ?? 0))
        case "dayOfWeek":
            // Rules count Monday as 1 and Sunday as 7; Foundation counts Sunday as 1.
            let weekday = calendar.component(.weekday, from: date)
            return .int(Int64(weekday == 1 ? 7 : weekday - 1))
        case "date", "time":
            // Midnight of the first day a timestamp holds is before the first nanosecond it holds.
            let (midnight, overflow) = Int64(calendar.startOfDay(for: date).timeIntervalSince1970)
                .multipliedReportingOverflow(by: 1_000_000_000)
            guard !overflow else { throw fail("\(name)() is out of range.") }
            return name == "date" ? .timestamp(midnight) : .duration(nanos - midnight)
        default: throw fail("A timestamp has no method \(name)().")
        }
    }

    // MARK: - Regular expressions

    /// Compiled patterns, bounded: rules files use a handful.
    private static let regexes = Mutex<[String: NSRegularExpression]>([:])

    private static func regex(_ pattern: String, at position: SourcePosition, anchored: Bool = true) throws(StorageRuleError) -> NSRegularExpression {
        // `matches` must match the whole string (as RE2's FullMatch): anchor the pattern.
        let source = anchored ? "^(?:\(pattern))$" : pattern
        if let cached = regexes.withLock({ $0[source] }) { return cached }
        guard let compiled = try? NSRegularExpression(pattern: source) else {
            throw StorageRuleError(message: "Invalid regular expression '\(pattern)'.", position: position)
        }
        regexes.withLock { cache in
            if cache.count >= 256 { cache.removeAll() }
            cache[source] = compiled
        }
        return compiled
    }
}
