import Testing
@testable import HearthCore

@Suite struct JSONParserTests {
    // MARK: - Round trips and basic values

    @Test(arguments: [
        "null", "true", "false", "0", "-7", "42", "2.5", "-0.125", #""""#, #""hello""#,
        #"{"a":1}"#,
        #"{"a":1,"b":"x","c":true,"d":false,"e":{"f":-2.5,"g":"h"}}"#,
        #"[1,2,3]"#,
        #"[[1,2],[3],{"k":"v"}]"#,
        #"{"1":"one","2":"two","10":"ten","a":"A"}"#,
        #"{"list":["x","y"]}"#,
        #"{"é":"ü","😀":"\u0000"}"#,
    ])
    func canonicalTextRoundTrips(_ text: String) throws {
        #expect(json(try node(text)) == text)
    }

    @Test func reparsingWrittenOutputGivesTheSameNode() throws {
        let texts = [
            #"{"z":[1,null,3],"a":{"b":{"c":"d"}},"n":-1.5e10,"s":"line\nbreak\t\"q\" \\ /"}"#,
            #"  {  "x" : [ 1 , { "y" : 2 } ] , "w" : 0.1 }  "#,
            #"{"a":{".value":1,".priority":2},"b":{".priority":"p","c":true}}"#,
        ]
        for text in texts {
            let original = try node(text)
            #expect(try node(json(original)) == original.withoutPriorities, "\(text)")
            #expect(try node(exportJSON(original)) == original, "export of \(text)")
        }
    }

    @Test func whitespaceAroundTokensIsAllowed() throws {
        let value = try node(" \t\r\n{ \"a\" :\n[ 1 ,\t2 ] }\n ")
        #expect(json(value) == #"{"a":[1,2]}"#)
    }

    @Test func acceptsNonContiguousInput() throws {
        let bytes = Array(#"{"a":[true]}"#.utf8)
        let parsed = try JSONParser.parse(bytes.lazy.map { $0 })
        #expect(json(parsed.node) == #"{"a":[true]}"#)
        let update = try JSONParser.parseUpdate(Array(#"{"a/b":1}"#.utf8).lazy.map { $0 })
        #expect(update.count == 1)
        #expect(update.first?.path == path("a/b"))
    }

    @Test func progressIsReportedUpToTheWholeBody() throws {
        let text = #"{"a":""# + String(repeating: "x", count: 3 << 20) + #"","b":[1,2,3]}"#
        let bytes = Array(text.utf8)
        var reports: [Int] = []
        let result = try JSONParser.parse(bytes, progress: { reports.append($0) })
        #expect(result.node.childCount == 2)
        #expect(reports.last == bytes.count)
        #expect(reports == reports.sorted())
    }

    // MARK: - Numbers

    @Test func integersStayIntegers() throws {
        #expect(try node("1") == .int(1))
        if case .int(let value) = try node("1") { #expect(value == 1) } else { Issue.record("1 is not an int") }
        if case .double = try node("1.0") {} else { Issue.record("1.0 should parse as a double") }
        #expect(json(try node("1.0")) == "1")
        #expect(json(try node("-3.0")) == "-3")
        #expect(json(try node("1e2")) == "100")
        #expect(json(try node("1.5E3")) == "1500")
        #expect(json(try node(#"{"a":1.0,"b":[2.0]}"#)) == #"{"a":1,"b":[2]}"#)
        #expect(json(try node("-0")) == "0")
        #expect(json(try node("-0.0")) == "0")
        #expect(json(try node("0.1")) == "0.1")
        #expect(json(try node("-2.75")) == "-2.75")
    }

    @Test(arguments: [
        "9007199254740993",  // 2^53 + 1: not representable as a double
        "123456789012345678",  // 18 characters
        "1234567890123456789",  // 19 digits
        "9223372036854775807",  // Int64.max
        "-9223372036854775808",  // Int64.min
        "-999999999999999999",
    ])
    func largeIntegersAreExact(_ text: String) throws {
        let value = try node(text)
        guard case .int(let integer) = value else {
            Issue.record("\(text) did not parse as an integer: \(value)")
            return
        }
        #expect(String(integer) == text)
        #expect(json(value) == text)
    }

    @Test func integersBeyondInt64BecomeDoubles() throws {
        let value = try node("9223372036854775808")
        guard case .double(let double) = value else {
            Issue.record("expected a double, got \(value)")
            return
        }
        #expect(double == 9_223_372_036_854_775_808.0)
        #expect(try node(json(value)) == value)
    }

    @Test func extremeDoublesRoundTrip() throws {
        for text in ["1e300", "-1.7976931348623157e308", "5e-324", "1e-7", "0.30000000000000004", "123.456"] {
            let value = try node(text)
            #expect(try node(json(value)) == value, "\(text) -> \(json(value))")
        }
    }

    @Test(arguments: [
        "NaN", "-NaN", "Infinity", "-Infinity", "inf", "1e400", "-1e400", "1E999",
        #"{"a":NaN}"#, #"[1,Infinity]"#, #"{"a":1e400}"#,
    ])
    func nonFiniteNumbersAreRejected(_ text: String) {
        #expect(parseError(text)?.message == ReferenceText.unparseable)
    }

    // MARK: - Malformed input

    @Test(arguments: [
        "", " ", "{", "}", "[", "]", "[1,]", "[,1]", "[1 2]", #"{"a":1,}"#, #"{"a" 1}"#, #"{"a":}"#, "{a:1}",
        "{'a':1}", "'a'", "01", "-", "--1", "+1", "1.", ".5", "1e", "1e+", "0x10", "tru", "nul", "falsey", "True",
        #""abc"#, #""a\x""#, #""\u12""#, #""\u12G4""#, #""\"#, "1 2", #"{"a":1}}"#, #"{"a":1} x"#, "[1]]",
        #"{"a":1 "b":2}"#, #"{,}"#, "null null", "\u{FEFF}1", "/* */ 1",
    ])
    func malformedJSONIsUnparseable(_ text: String) {
        #expect(parseError(text)?.message == ReferenceText.unparseable, "\(text.debugDescription)")
        #expect(parseError(text)?.code == .invalidData)
    }

    @Test func unparseableTextIsExactlyTheReferenceText() {
        #expect(HearthError.unparseableData.message == "Invalid data; couldn't parse JSON object, array, or value.")
        #expect(parseError("{")?.message == "Invalid data; couldn't parse JSON object, array, or value.")
    }

    @Test func nestingBeyondTheParserLimitIsRejected() throws {
        let fine = String(repeating: "[", count: 100) + "1" + String(repeating: "]", count: 100)
        #expect(try parsed(fine).depth == 100)
        let deep = String(repeating: "[", count: 600) + "1" + String(repeating: "]", count: 600)
        #expect(parseError(deep) == .unparseableData)
    }

    // MARK: - Strings and Unicode

    @Test func simpleEscapes() throws {
        #expect(try node(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{8}\u{C}\n\r\t"))
        #expect(try node(#""a\u0000b""#) == .string("a\u{0}b"))
    }

    @Test func unicodeEscapesAndSurrogatePairs() throws {
        #expect(try node(#""\u0041""#) == .string("A"))
        #expect(try node(#""\u00e9\u00E9""#) == .string("éé"))
        #expect(try node(#""\u20AC""#) == .string("€"))
        #expect(try node(#""\uD83D\uDE00""#) == .string("😀"))
        #expect(try node(#""\ud834\udd1e!""#) == .string("𝄞!"))
        #expect(try node(#""x\uE000y""#) == .string("x\u{E000}y"))
        #expect(try node(#""\uFFFF""#) == .string("\u{FFFF}"))
        // Raw UTF-8 is taken as is, in values and in keys.
        #expect(try node(#"{"ключ":"héllo 😀 中"}"#).child(key("ключ")) == .string("héllo 😀 中"))
    }

    @Test(arguments: [
        #""\uD83D""#,  // lone high surrogate
        #""\uD83Dx""#,
        #""\uD83D\u0041""#,  // high surrogate followed by a non-surrogate
        #""\uD83D\uD83D""#,  // two high surrogates
        #""\uDE00""#,  // lone low surrogate
        #""\uDE00\uD83D""#,  // reversed pair
    ])
    func brokenSurrogatesAreRejected(_ text: String) {
        #expect(parseError(text) == .unparseableData)
    }

    @Test func invalidUTF8IsRejected() {
        let q: UInt8 = 0x22
        let cases: [[UInt8]] = [
            [q, 0xFF, q],  // never valid
            [q, 0xC0, 0xAF, q],  // overlong "/"
            [q, 0xE2, 0x82, q],  // truncated sequence
            [q, 0x80, q],  // lone continuation byte
            [q, 0xED, 0xA0, 0x80, q],  // an encoded surrogate
            [q, 0xF4, 0x90, 0x80, 0x80, q],  // above U+10FFFF
            [q, 0x5C, 0x6E, 0xFF, q],  // after an escape (the slow path)
            Array(#"{""#.utf8) + [0xC3] + Array(#"":1}"#.utf8),  // in a key
            [0xFF],  // outside a string
            Array(#"{"a":1}"#.utf8) + [0xC3, 0xA9],  // trailing bytes
        ]
        for bytes in cases {
            #expect(parseError(bytes) == .unparseableData, "\(bytes)")
        }
        #expect(parseError([q, 0xC3, 0xA9, q]) == nil)  // "é" is fine
    }

    @Test func rawControlCharactersInStringsAreRejected() {
        for scalar in [0x00, 0x01, 0x09, 0x0A, 0x0D, 0x1F] {
            let bytes: [UInt8] = [0x22, 0x61, UInt8(scalar), 0x62, 0x22]
            #expect(parseError(bytes) == .unparseableData, "control \(scalar)")
            let afterEscape: [UInt8] = [0x22, 0x5C, 0x74, UInt8(scalar), 0x22]
            #expect(parseError(afterEscape) == .unparseableData, "control \(scalar) after an escape")
        }
        // DEL is not a JSON control character.
        #expect(parseError([0x22, 0x7F, 0x22]) == nil)
    }

    @Test func stringsUpTo10MBAreAccepted() throws {
        let limit = 10 * 1024 * 1024
        #expect(JSONParser.maxStringBytes == limit)
        let fits = "\"" + String(repeating: "a", count: limit) + "\""
        guard case .string(let value) = try node(fits) else {
            Issue.record("expected a string")
            return
        }
        #expect(value.utf8.count == limit)
    }

    @Test func stringsOver10MBAreRejected() {
        let limit = 10 * 1024 * 1024
        let plain = "\"" + String(repeating: "a", count: limit + 1) + "\""
        let error = parseError(plain)
        #expect(error == JSONParser.stringTooLong)
        #expect(error?.code == .invalidData)
        // Through the escape-handling path.
        let escaped = "\"\\n" + String(repeating: "a", count: limit) + "\""
        #expect(parseError(escaped) == JSONParser.stringTooLong)
        // The limit is in UTF-8 bytes, not characters: 3,495,254 × "€" is 10,485,762 bytes.
        let wide = "\"" + String(repeating: "€", count: limit / 3 + 1) + "\""
        #expect(parseError(wide) == JSONParser.stringTooLong)
        // Nested inside an object.
        let nested = #"{"a":{"b":""# + String(repeating: "x", count: limit + 1) + #""}}"#
        #expect(parseError(nested) == JSONParser.stringTooLong)
    }

    // MARK: - Keys

    @Test(arguments: [
        (#"{"a.b":1}"#, 1, 2),
        (#"{"$x":1}"#, 1, 2),
        (#"{"a#":1}"#, 1, 2),
        (#"{"[":1}"#, 1, 2),
        (#"{"]":1}"#, 1, 2),
        (#"{"a/b":1}"#, 1, 2),
        (#"{"":1}"#, 1, 2),
        (#"{".hidden":1}"#, 1, 2),
        (#"{".":1}"#, 1, 2),
        (#"{"tab\there":1}"#, 1, 2),
        (#"{"nul\u0000":1}"#, 1, 2),
        (#"{"del\u007f":1}"#, 1, 2),
        (#"{"ok":1,"b$":2}"#, 1, 9),
        (#"{"ok": {"é": 1, "x.y": 2}}"#, 1, 17),
        (#"{"é":1,"x.y":2}"#, 1, 8),
        (#"[1, {"fine": [ {"bad]": 0} ]}]"#, 1, 17),
        ("{\n  \"a\": {\n    \"$x\": 1\n  }\n}", 3, 5),
        ("{\n\"ok\": 1,\n\n\"a.b\": 2}", 4, 1),
        ("{\r\n\"a.b\":1}", 2, 1),
        ("[\n[\n[{\"#\":1}]]]", 3, 3),
    ] as [(String, Int, Int)])
    func badKeysReportLineAndColumn(_ text: String, _ line: Int, _ column: Int) {
        let error = parseError(text)
        #expect(error?.message == ReferenceText.badKey(line, column), "\(text.debugDescription)")
        #expect(error?.code == .invalidData)
    }

    @Test func badKeyTextIsExactlyTheReferenceText() {
        #expect(
            parseError(#"{"a.b":1}"#)?.message
                == "Invalid data; couldn't parse key beginning at 1:2. Key value can't be empty or contain $ # [ ] / or ."
        )
    }

    @Test func keysUpTo768BytesAreAccepted() throws {
        let ascii = String(repeating: "k", count: 768)
        #expect(try node(#"{"\#(ascii)":1}"#).child(key(ascii)) == .int(1))
        let wide = String(repeating: "€", count: 256)  // 768 bytes
        #expect(try node(#"{"\#(wide)":1}"#).child(key(wide)) == .int(1))
    }

    @Test func keysOver768BytesAreRejected() {
        let ascii = String(repeating: "k", count: 769)
        #expect(parseError(#"{"\#(ascii)":1}"#)?.message == ReferenceText.badKey(1, 2))
        let wide = String(repeating: "€", count: 257)  // 771 bytes, 257 characters
        #expect(parseError(#"{"a":{"\#(wide)":1}}"#)?.message == ReferenceText.badKey(1, 7))
    }

    @Test func unusualButValidKeysAreAccepted() throws {
        let text = #"{"a b":1,"-":2,"-1":3,"007":4,"_~!@%^&*()=+":5,"é😀":6,"\u00e9":7}"#
        let value = try node(text)
        #expect(value.childCount == 7)
        #expect(value.child(key("é")) == .int(7))
        #expect(value.child(key("_~!@%^&*()=+")) == .int(5))
    }

    @Test func repeatedKeysKeepTheLastValue() throws {
        #expect(json(try node(#"{"a":1,"a":2}"#)) == #"{"a":2}"#)
        #expect(json(try node(#"{"b":1,"a":2,"b":3}"#)) == #"{"a":2,"b":3}"#)
        // A later null removes the earlier value, as it would after JSON.parse.
        #expect(try node(#"{"a":1,"a":null}"#) == .null)
        #expect(json(try node(#"{"a":1,"b":2,"a":null}"#)) == #"{"b":2}"#)
        #expect(json(try node(#"{"a":null,"a":5}"#)) == #"{"a":5}"#)
    }

    @Test func integerLookingKeysThatDifferOnlyInSignStayDistinct() throws {
        // "-0" and "00" are both the integer 0 with two characters; they are still two keys.
        let value = try node(#"{"00":1,"-0":2,"0":3}"#)
        #expect(value.childCount == 3)
        #expect(value.child(key("00")) == .int(1))
        #expect(value.child(key("-0")) == .int(2))
        #expect(value.child(key("0")) == .int(3))
    }

    // MARK: - Arrays, nulls and empty objects

    @Test func arraysBecomeObjectsKeyedByIndex() throws {
        let value = try node(#"["a","b","c"]"#)
        let children = try #require(value.children)
        #expect(children.map { $0.key.string } == ["0", "1", "2"])
        #expect(children.map { $0.value } == [.string("a"), .string("b"), .string("c")])
        let big = try node("[" + (0..<25).map(String.init).joined(separator: ",") + "]")
        #expect(big.children?.map { $0.key.string } == (0..<25).map(String.init))
        #expect(big.child(key("24")) == .int(24))
    }

    @Test func nullArrayElementsAreDropped() throws {
        let value = try node("[null,1,null,2]")
        #expect(value.children?.map { $0.key.string } == ["1", "3"])
        #expect(value.child(key("3")) == .int(2))
        #expect(try node("[null]") == .null)
        #expect(try node("[null,null]") == .null)
    }

    @Test func emptyAndNullValuesVanish() throws {
        #expect(try node("{}") == .null)
        #expect(try node("[]") == .null)
        #expect(try node(#"{"a":null}"#) == .null)
        #expect(try node(#"{"a":{}}"#) == .null)
        #expect(try node(#"{"a":[]}"#) == .null)
        #expect(try node(#"{"a":{"b":{"c":{}}}}"#) == .null)
        #expect(try node(#"[[],{},[null],{"x":null}]"#) == .null)
        #expect(json(try node(#"{"a":{"b":{}},"c":1,"d":{"e":null,"f":2}}"#)) == #"{"c":1,"d":{"f":2}}"#)
        #expect(json(try node(#"[{},{"k":1}]"#)) == #"[null,{"k":1}]"#)
    }

    @Test func nestedArrays() throws {
        let value = try node("[[1,2],[3]]")
        #expect(value.child(at: path("0/1")) == .int(2))
        #expect(value.child(at: path("1/0")) == .int(3))
        #expect(json(value) == "[[1,2],[3]]")
        #expect(exportJSON(value) == #"{"0":{"0":1,"1":2},"1":{"0":3}}"#)
    }

    @Test func depthCountsNestingLevels() throws {
        #expect(try parsed("1").depth == 0)
        #expect(try parsed(#"{"a":1}"#).depth == 1)
        #expect(try parsed(#"{"a":{"b":[1]}}"#).depth == 3)
        #expect(try parsed(#"[{"a":{"b":1}},2]"#).depth == 3)
    }

    // MARK: - Priorities and server values

    @Test func priorityAndValueKeys() throws {
        let object = try node(#"{"a":1,".priority":5}"#)
        #expect(object.priority == .number(5))
        #expect(object.child(key("a")) == .int(1))
        #expect(object.childCount == 1)

        let leaf = try node(#"{".value":"x",".priority":"p"}"#)
        #expect(leaf == .prioritized(.string("x"), .string("p")))
        #expect(try node(#"{".priority":1.5,".value":true}"#) == .prioritized(.bool(true), .number(1.5)))
        #expect(try node(#"{".value":3}"#) == .int(3))
        #expect(try node(#"{".value":null,".priority":1}"#) == .null)
        #expect(try node(#"{".priority":1}"#) == .null)
        #expect(try node(#"{".priority":null,"a":1}"#).priority == nil)
        let nested = try node(#"{"a":{"b":{".value":1,".priority":2}}}"#)
        #expect(nested.child(at: path("a/b")) == .prioritized(.int(1), .number(2)))
    }

    @Test func invalidPriorityAndValueCombinations() {
        #expect(parseError(#"{".value":1,"a":2}"#) == .unparseableData)
        #expect(parseError(#"{"a":2,".value":1}"#) == .unparseableData)
        for text in [#"{".priority":true,"a":1}"#, #"{".priority":{"x":1},"a":1}"#, #"{".priority":[1],"a":1}"#] {
            let error = parseError(text)
            #expect(error != nil, "\(text)")
            #expect(error?.code == .invalidData, "\(text)")
        }
    }

    @Test func serverValuePlaceholdersAreKept() throws {
        let timestamp = try parsed(#"{"t":{".sv":"timestamp"}}"#)
        #expect(timestamp.hasServerValues)
        #expect(ServerValues.placeholderValue(timestamp.node.child(key("t"))) == .string("timestamp"))
        #expect(try parsed(#"{"t":{"sv":"timestamp"}}"#).hasServerValues == false)
        #expect(try parsed(#"{".sv":{"increment":1}}"#).hasServerValues)
        #expect(try parsed("[1,2]").hasServerValues == false)
        #expect(parseError(#"{".sv":"timestamp","a":1}"#) == .unparseableData)
        #expect(parseError(#"{".sv":"timestamp",".priority":1}"#) == .unparseableData)
    }

    // MARK: - Multi-location updates

    @Test(arguments: ["1", #""text""#, "true", "false", "null", "[1,2]", "[]", " 3.5 ", "[{\"a\":1}]"])
    func updateBodiesMustBeObjects(_ text: String) {
        let error = updateError(text)
        #expect(error?.message == ReferenceText.notAnObject, "\(text)")
        #expect(error?.message == "Invalid data; couldn't parse JSON object. Are you sending a JSON object with valid key names?")
    }

    @Test(arguments: ["", "{", "nope", "[1,", #"{"a":}"#, #"{"a":1,}"#, #"{"a":1} x"#, #"{"a" 1}"#, "{a:1}", #"{"a":1 "b":2}"#])
    func malformedUpdateBodiesAreUnparseable(_ text: String) {
        #expect(updateError(text)?.message == ReferenceText.unparseable, "\(text)")
    }

    @Test func updatePathsAndValues() throws {
        let entries = try JSONParser.parseUpdate(Array(#"{"a/b":1,"c":{"d":[2]},"e":null,"/f//g/":"x"}"#.utf8))
        #expect(entries.map { $0.path } == [path("a/b"), path("c"), path("e"), path("f/g")])
        #expect(entries[0].value.node == .int(1))
        #expect(json(entries[1].value.node) == #"{"d":[2]}"#)
        #expect(entries[1].value.depth == 2)
        #expect(entries[2].value.node == .null)
        #expect(entries[3].value.node == .string("x"))
        #expect(try JSONParser.parseUpdate(Array("{}".utf8)).isEmpty)
        #expect(try JSONParser.parseUpdate(Array(" { } ".utf8)).isEmpty)
    }

    @Test func repeatedUpdatePathsKeepTheLastValueAtTheFirstPosition() throws {
        let entries = try JSONParser.parseUpdate(Array(#"{"a":1,"b":2,"a":3,"x/y":4,"x//y":null}"#.utf8))
        #expect(entries.map { $0.path } == [path("a"), path("b"), path("x/y")])
        #expect(entries.map { $0.value.node } == [.int(3), .int(2), .null])
    }

    @Test func updateEntriesTrackServerValuesSeparately() throws {
        let entries = try JSONParser.parseUpdate(Array(#"{"a":{".sv":"timestamp"},"b":{"c":{"d":1}},"p/.priority":2}"#.utf8))
        #expect(entries.count == 3)
        #expect(entries[0].value.hasServerValues)
        #expect(entries[1].value.hasServerValues == false)
        #expect(entries[1].value.depth == 2)
        #expect(entries[2].path.isPriorityPath)
    }

    @Test(arguments: [#"{"a.b":1}"#, #"{"":1}"#, #"{"/":1}"#, #"{"x/$y":1}"#, #"{"a#":1}"#, #"{".priority/x":1}"#, #"{".sv":1}"#, #"{"ok":1,"[x]":2}"#])
    func invalidUpdatePathsAreRejected(_ text: String) {
        #expect(updateError(text)?.message == ReferenceText.notAnObject, "\(text)")
    }

    @Test func updatePathsDeeperThan32LevelsAreRejected() throws {
        let fine = (1...32).map { "k\($0)" }.joined(separator: "/")
        #expect(try JSONParser.parseUpdate(Array(#"{"\#(fine)":1}"#.utf8)).first?.path.count == 32)
        let deep = (1...33).map { "k\($0)" }.joined(separator: "/")
        #expect(updateError(#"{"\#(deep)":1}"#)?.message == ReferenceText.notAnObject)
    }

    @Test func badKeysNestedInUpdateValuesReportTheirPosition() {
        #expect(updateError(#"{"b":{"c$":1}}"#)?.message == ReferenceText.badKey(1, 7))
        #expect(updateError("{\"ok\":1,\n \"b\": {\"x\": {\"\": 2}}}")?.message == ReferenceText.badKey(2, 14))
    }
}

extension Node {
    /// The same value with every priority removed (what a non-export read shows).
    var withoutPriorities: Node {
        switch unprioritized {
        case .object(let children):
            return Node.object(children.map { ($0.key, $0.value.withoutPriorities) })
        case let leaf:
            return leaf
        }
    }
}
