import Testing
@testable import HearthCore

@Suite struct ServerValuesTests {
    static let now: Int64 = 1_700_000_000_123

    private func write(_ text: String, at location: String, over state: DatabaseState = DatabaseState()) throws -> (DatabaseState, ResolvedWrite) {
        try state.applying(.set(path(location), parsed(text)), now: Self.now)
    }

    private func value(_ text: String, at location: String = "v", over existing: String? = nil) throws -> Node {
        var state = DatabaseState()
        if let existing { state = try state.setting(existing, at: location) }
        return try write(text, at: location, over: state).0.value(at: path(location))
    }

    private func increment(_ delta: String, over existing: String?) throws -> Node {
        try value(#"{".sv":{"increment":\#(delta)}}"#, over: existing)
    }

    // MARK: - Timestamp

    @Test func timestampBecomesTheServerTime() throws {
        let (state, resolved) = try write(#"{".sv":"timestamp"}"#, at: "t")
        guard case .int(let value) = state.value(at: path("t")) else {
            Issue.record("timestamp is not an integer")
            return
        }
        #expect(value == Self.now)
        #expect(resolved == .set(path("t"), .int(Self.now)))
    }

    @Test func timestampsNestedInObjectsAndArrays() throws {
        let (state, resolved) = try write(#"{"a":{"created":{".sv":"timestamp"},"n":1},"list":[{".sv":"timestamp"},"x"],"b":2}"#, at: "/")
        let expected = #"{"a":{"created":1700000000123,"n":1},"b":2,"list":[1700000000123,"x"]}"#
        #expect(json(state.root) == expected)
        guard case .set(_, let logged) = resolved else {
            Issue.record("expected a set")
            return
        }
        #expect(json(logged) == expected)
        #expect(!json(logged).contains(".sv"))
    }

    @Test func timestampsInsidePrioritizedChildren() throws {
        let (state, _) = try write(#"{"a":{"b":{".sv":"timestamp"},".priority":1}}"#, at: "/")
        #expect(exportJSON(state.root) == #"{"a":{".priority":1,"b":1700000000123}}"#)
    }

    @Test func timestampAsAPrioritizedValue() throws {
        let (state, _) = try write(#"{".value":{".sv":"timestamp"},".priority":"p"}"#, at: "t")
        #expect(state.value(at: path("t")) == .prioritized(.int(Self.now), .string("p")))
        #expect(exportJSON(state.root) == #"{"t":{".value":1700000000123,".priority":"p"}}"#)
    }

    @Test func timestampWrittenAsAPriority() throws {
        let state = try DatabaseState().setting(#"{"x":1}"#, at: "a")
        let (next, _) = try write(#"{".sv":"timestamp"}"#, at: "a/.priority", over: state)
        #expect(next.value(at: path("a")).priority == .number(Double(Self.now)))
    }

    // MARK: - Increment

    @Test func integerPlusInteger() throws {
        let result = try increment("3", over: "5")
        guard case .int(8) = result else {
            Issue.record("expected the integer 8, got \(result)")
            return
        }
        #expect(json(try increment("-10", over: "5")) == "-5")
    }

    @Test func integerOverflowFallsBackToDouble() throws {
        let up = try increment("1", over: String(Int64.max))
        guard case .double(let sum) = up else {
            Issue.record("expected a double, got \(up)")
            return
        }
        #expect(sum == Double(Int64.max) + 1)
        let down = try increment("-1", over: String(Int64.min))
        guard case .double(let difference) = down else {
            Issue.record("expected a double, got \(down)")
            return
        }
        #expect(difference == Double(Int64.min) - 1)
        // No overflow: stays an exact integer.
        guard case .int(let exact) = try increment("-1", over: String(Int64.max)) else {
            Issue.record("expected an integer")
            return
        }
        #expect(exact == Int64.max - 1)
    }

    @Test func mixedIntegerAndDouble() throws {
        #expect(try increment("0.5", over: "1") == .double(1.5))
        #expect(try increment("2", over: "1.5") == .double(3.5))
        #expect(try increment("0.25", over: "0.5") == .double(0.75))
        #expect(json(try increment("1", over: "1.5")) == "2.5")
        guard case .double = try increment("1", over: "1.5") else {
            Issue.record("a double plus an integer should be a double")
            return
        }
    }

    @Test func missingValueIsReplacedByTheDelta() throws {
        guard case .int(7) = try increment("7", over: nil) else {
            Issue.record("expected the integer 7")
            return
        }
        #expect(try increment("2.5", over: nil) == .double(2.5))
        #expect(try increment("-4", over: nil) == .int(-4))
    }

    @Test(arguments: [#""text""#, "true", "false", #"{"x":1}"#, "[1,2]"])
    func nonNumericValueIsReplacedByTheDelta(_ existing: String) throws {
        #expect(try increment("3", over: existing) == .int(3))
        #expect(try increment("0.5", over: existing) == .double(0.5))
    }

    @Test func incrementReadsAPrioritizedCurrentValue() throws {
        #expect(try increment("1", over: #"{".value":41,".priority":5}"#) == .int(42))
    }

    @Test func incrementNestedInAnObjectReadsTheValueAtItsOwnPath() throws {
        let state = try DatabaseState().setting(#"{"n":10,"m":"keep?","deep":{"c":1.5}}"#, at: "counter")
        let (next, resolved) = try write(
            #"{"n":{".sv":{"increment":5}},"m":1,"deep":{"c":{".sv":{"increment":1}},"d":{".sv":{"increment":2}}}}"#,
            at: "counter", over: state
        )
        #expect(json(next.value(at: path("counter"))) == #"{"deep":{"c":2.5,"d":2},"m":1,"n":15}"#)
        guard case .set(_, let logged) = resolved else {
            Issue.record("expected a set")
            return
        }
        #expect(json(logged) == #"{"deep":{"c":2.5,"d":2},"m":1,"n":15}"#)
    }

    @Test func incrementsAndTimestampsInsideUpdates() throws {
        let state = try DatabaseState().setting(#"{"a":{"n":1},"b":2,"c":"s"}"#, at: "/")
        let entries = try JSONParser.parseUpdate(Array(#"""
            {"a/n":{".sv":{"increment":10}},"b":{".sv":{"increment":0.5}},"c":{".sv":{"increment":1}},
             "d":{"when":{".sv":"timestamp"}},"e/f":{".sv":{"increment":3}}}
            """#.utf8))
        let (next, resolved) = try state.applying(.update(.root, entries), now: Self.now)
        #expect(json(next.root) == #"{"a":{"n":11},"b":2.5,"c":1,"d":{"when":1700000000123},"e":{"f":3}}"#)
        guard case .update(_, let logged) = resolved else {
            Issue.record("expected an update")
            return
        }
        #expect(logged.map(\.value) == [.int(11), .double(2.5), .int(1), .object([(key("when"), .int(Self.now))]), .int(3)])
    }

    @Test func incrementsInAnUpdateReadTheStateBeforeTheUpdate() throws {
        let state = try DatabaseState().setting(#"{"x":1,"y":100}"#, at: "/")
        let entries = try JSONParser.parseUpdate(Array(#"{"x":{".sv":{"increment":1}},"y":{".sv":{"increment":1}}}"#.utf8))
        let (next, _) = try state.applying(.update(.root, entries), now: 0)
        #expect(json(next.root) == #"{"x":2,"y":101}"#)
    }

    // MARK: - Unknown server values

    @Test(arguments: [
        #"{".sv":"bogus"}"#, #"{".sv":"TIMESTAMP"}"#, #"{".sv":5}"#, #"{".sv":true}"#, #"{".sv":null}"#,
        #"{".sv":{"decrement":1}}"#, #"{".sv":{"increment":"1"}}"#, #"{".sv":{"increment":true}}"#,
        #"{".sv":{"increment":1,"extra":2}}"#, #"{".sv":{"increment":{"x":1}}}"#, #"{".sv":{}}"#,
        #"{"a":{"b":{".sv":"later"}}}"#,
    ])
    func unknownServerValuesAreRejected(_ text: String) throws {
        let state = try DatabaseState().setting(#"{"v":1}"#, at: "/")
        let body = try parsed(text)
        #expect(body.hasServerValues)
        do throws(HearthError) {
            _ = try state.applying(.set(path("v"), body), now: Self.now)
            Issue.record("\(text) was accepted")
        } catch {
            #expect(error.code == .invalidData)
            #expect(error.message.hasPrefix("Invalid data; unrecognized server value"), "\(error.message)")
        }
        #expect(json(state.root) == #"{"v":1}"#)
    }

    @Test func resolvingANodeWithoutPlaceholdersChangesNothing() throws {
        let value = try node(#"{"a":{"b":[1,2]},"c":{".value":"x",".priority":1}}"#)
        #expect(try ServerValues.resolve(value, existing: .null, now: 1) == value)
    }
}
