import Testing
@testable import HearthCore

@Suite struct JSONWriterTests {
    private static let pretty = JSONWriter.Format(pretty: true)
    private static let export = JSONWriter.Format(export: true)
    private static let prettyExport = JSONWriter.Format(pretty: true, export: true)

    // MARK: - Scalars

    @Test func leaves() {
        #expect(json(.null) == "null")
        #expect(json(.bool(true)) == "true")
        #expect(json(.bool(false)) == "false")
        #expect(json(.string("")) == #""""#)
        #expect(json(.string("héllo 😀")) == #""héllo 😀""#)
    }

    @Test func integersRenderExactly() {
        #expect(json(.int(0)) == "0")
        #expect(json(.int(-1)) == "-1")
        #expect(json(.int(1_234_567_890_123)) == "1234567890123")
        #expect(json(.int(Int64.max)) == "9223372036854775807")
        #expect(json(.int(Int64.min)) == "-9223372036854775808")
    }

    @Test func integralDoublesRenderAsIntegers() {
        #expect(json(.double(1.0)) == "1")
        #expect(json(.double(-3.0)) == "-3")
        #expect(json(.double(0.0)) == "0")
        #expect(json(.double(-0.0)) == "0")
        #expect(json(.double(9_007_199_254_740_991)) == "9007199254740991")
        #expect(json(.double(2.5)) == "2.5")
        #expect(json(.double(0.1)) == "0.1")
        #expect(json(.double(-128.256)) == "-128.256")
    }

    @Test func hugeAndTinyDoublesStayParseable() throws {
        for value in [1e300, -1e300, 9_007_199_254_740_992, 1e-300, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude] {
            let text = json(.double(value))
            #expect(try node(text).numberValue == value, "\(value) -> \(text)")
        }
    }

    @Test func controlCharactersAreEscaped() {
        let text = "a\u{0}b\u{1}c\u{1F}d\"e\\f\ng\rh\ti\u{8}j\u{C}k"
        #expect(json(.string(text)) == #""a\u0000b\u0001c\u001fd\"e\\f\ng\rh\ti\bj\fk""#)
        // Slash, DEL and non-ASCII text are written as they are.
        #expect(json(.string("/\u{7F}é\u{2028}")) == "\"/\u{7F}é\u{2028}\"")
    }

    @Test func everyControlCharacterRoundTrips() throws {
        for scalar in 0..<0x20 {
            let text = "x" + String(Character(Unicode.Scalar(UInt8(scalar)))) + "y"
            let written = json(.string(text))
            #expect(!written.utf8.contains { $0 < 0x20 }, "raw control \(scalar) in \(written.debugDescription)")
            #expect(try node(written) == .string(text), "control \(scalar)")
        }
    }

    /// Strings are scanned eight bytes at a time: escapes at every position of a word and of a
    /// tail, next to multi-byte characters, render as a byte-by-byte reference renders them.
    @Test func escapesMatchAReferenceAtEveryPosition() {
        func reference(_ text: String) -> [UInt8] {
            let hex = Array("0123456789abcdef".utf8)
            var out: [UInt8] = [0x22]
            for unit in text.utf8 {
                switch unit {
                case 0x22: out += Array(#"\""#.utf8)
                case 0x5C: out += Array(#"\\"#.utf8)
                case 0x0A: out += Array(#"\n"#.utf8)
                case 0x0D: out += Array(#"\r"#.utf8)
                case 0x09: out += Array(#"\t"#.utf8)
                case 0x08: out += Array(#"\b"#.utf8)
                case 0x0C: out += Array(#"\f"#.utf8)
                case 0..<0x20: out += Array(#"\u00"#.utf8) + [hex[Int(unit >> 4)], hex[Int(unit & 0x0F)]]
                default: out.append(unit)
                }
            }
            return out + [0x22]
        }
        let pieces = ["a", "é", "\"", "\\", "\n", "\u{01}", "\u{1F}", " ", "~", "\u{7F}", "😀", "中", "abcdefgh"]
        var random = SeededGenerator(seed: 21)
        for length in 0..<40 {
            for _ in 0..<20 {
                let text = (0..<length).map { _ in pieces.randomElement(using: &random)! }.joined()
                #expect(Array(json(.string(text)).utf8) == reference(text), "\(text.debugDescription)")
            }
        }
    }

    @Test func keysAreEscapedToo() throws {
        let value = Node.object([(key("a\"b\\c"), .int(1))])
        #expect(json(value) == #"{"a\"b\\c":1}"#)
        #expect(try node(json(value)) == value)
    }

    // MARK: - Objects and arrays

    @Test func objectsListKeysInFirebaseOrder() throws {
        let value = try node(#"{"b":1,"a":2,"10":3,"9":4,"-1":5,"07":6}"#)
        #expect(json(value) == #"{"-1":5,"07":6,"9":4,"10":3,"a":2,"b":1}"#)
    }

    @Test(arguments: [
        (#"{"0":"a","1":"b","2":"c"}"#, #"["a","b","c"]"#),
        (#"{"0":"a","2":"c"}"#, #"["a",null,"c"]"#),
        (#"{"1":"x"}"#, #"[null,"x"]"#),
        (#"{"0":"a","3":"b"}"#, #"["a",null,null,"b"]"#),
        (#"{"0":1,"2":2,"4":3,"6":4,"8":5}"#, "[1,null,2,null,3,null,4,null,5]"),
        (#"{"0":"only"}"#, #"["only"]"#),
        // Largest key not below twice the count: an object.
        (#"{"2":"x"}"#, #"{"2":"x"}"#),
        (#"{"0":"a","4":"b"}"#, #"{"0":"a","4":"b"}"#),
        (#"{"1":1,"5":2}"#, #"{"1":1,"5":2}"#),
        // Keys that are not canonical indices: an object.
        (#"{"0":"a","07":"b"}"#, #"{"0":"a","07":"b"}"#),
        (#"{"00":"a"}"#, #"{"00":"a"}"#),
        (#"{"0":"a","01":"b","2":"c"}"#, #"{"0":"a","01":"b","2":"c"}"#),
        (#"{"-1":"a","0":"b"}"#, #"{"-1":"a","0":"b"}"#),
        (#"{"0":"a","1":"b","x":"c"}"#, #"{"0":"a","1":"b","x":"c"}"#),
        (#"{"0":"a","1 ":"b"}"#, #"{"0":"a","1 ":"b"}"#),
        // Nested.
        (#"{"0":{"0":1,"1":2},"1":{"a":3}}"#, #"[[1,2],{"a":3}]"#),
        (#"{"a":{"0":true,"1":false}}"#, #"{"a":[true,false]}"#),
    ] as [(String, String)])
    func arrayRendering(_ input: String, _ expected: String) throws {
        #expect(json(try node(input)) == expected)
    }

    @Test func arrayElementsWithPrioritiesStillRenderAsAnArray() throws {
        let value = try node(#"{"0":{".value":"a",".priority":2},"1":"b"}"#)
        #expect(json(value) == #"["a","b"]"#)
        #expect(exportJSON(value) == #"{"0":{".value":"a",".priority":2},"1":"b"}"#)
    }

    // MARK: - Pretty output

    @Test func prettyObjects() throws {
        #expect(json(try node(#"{"a":1}"#), Self.pretty) == "{\n  \"a\" : 1\n}")
        #expect(
            json(try node(#"{"a":{"b":true},"c":"x"}"#), Self.pretty)
                == "{\n  \"a\" : {\n    \"b\" : true\n  },\n  \"c\" : \"x\"\n}"
        )
    }

    @Test func prettyArraysAndLeaves() throws {
        #expect(json(try node("[1,2]"), Self.pretty) == "[\n  1,\n  2\n]")
        #expect(json(try node(#"{"l":[1,null,{"k":"v"}]}"#), Self.pretty).contains("\"l\" : [\n    1,\n    null,\n    {\n      \"k\" : \"v\"\n    }\n  ]"))
        #expect(json(.int(5), Self.pretty) == "5")
        #expect(json(.null, Self.pretty) == "null")
        #expect(json(.string("a\nb"), Self.pretty) == #""a\nb""#)
    }

    @Test func prettyOutputParsesBack() throws {
        let value = try node(#"{"a":[1,2,{"b":[3]}],"c":{"d":{"e":"f"}},"g":-1.5}"#)
        #expect(try node(json(value, Self.pretty)) == value)
        #expect(try node(json(value, Self.prettyExport)) == value)
    }

    // MARK: - Export format

    @Test func exportIncludesPriorities() throws {
        let leaf = Node.prioritized(.string("x"), .number(5))
        #expect(json(leaf) == #""x""#)
        #expect(exportJSON(leaf) == #"{".value":"x",".priority":5}"#)

        let object = try node(#"{"a":1,".priority":"p"}"#)
        #expect(json(object) == #"{"a":1}"#)
        #expect(exportJSON(object) == #"{".priority":"p","a":1}"#)

        let nested = try node(#"{"a":{".value":1,".priority":2.5},"b":{"c":true,".priority":-1}}"#)
        #expect(json(nested) == #"{"a":1,"b":{"c":true}}"#)
        #expect(exportJSON(nested) == #"{"a":{".value":1,".priority":2.5},"b":{".priority":-1,"c":true}}"#)
    }

    @Test func exportNeverMakesArrays() throws {
        #expect(exportJSON(try node("[1,2]")) == #"{"0":1,"1":2}"#)
        #expect(exportJSON(try node(#"{"0":"a","2":"c"}"#)) == #"{"0":"a","2":"c"}"#)
    }

    @Test func prettyExport() {
        let value = Node.prioritized(.object(Children(entries: [(key("a"), .int(1))])), .number(1))
        #expect(json(value, Self.prettyExport) == "{\n  \".priority\" : 1,\n  \"a\" : 1\n}")
        let leaf = Node.prioritized(.bool(true), .string("p"))
        #expect(json(leaf, Self.prettyExport) == "{\n  \".value\" : true,\n  \".priority\" : \"p\"\n}")
    }

    @Test func exportRoundTripsPriorities() throws {
        let texts = [
            #"{".priority":1,"a":{".priority":"x","b":{".value":"c",".priority":0.5}},"d":[1,{".value":2,".priority":3}]}"#,
            #"{".value":42,".priority":"high"}"#,
        ]
        for text in texts {
            let value = try node(text)
            #expect(try node(exportJSON(value)) == value, "\(text)")
        }
    }

    // MARK: - Chunked output

    @Test func chunkedOutputMatchesOneShotOutput() throws {
        let entries = (0..<2_000).map { (key("child\($0)"), Node.string(String(repeating: "v", count: $0 % 50))) }
        let value = Node.object(entries)
        var chunks: [[UInt8]] = []
        var writer = JSONWriter(format: .compact, chunkSize: 1_024) { chunks.append(Array($0)) }
        try writer.writeFlushing(value)
        try writer.flush()
        #expect(chunks.count > 10)
        #expect(chunks.dropLast().allSatisfy { $0.count >= 1_024 })
        #expect(chunks.flatMap { $0 } == JSONWriter.bytes(value))
        #expect(writer.nodesWritten == 2_001)
    }

    @Test func sinkErrorsAreThrown() {
        struct SinkFailed: Error {}
        let value = Node.object((0..<500).map { (key("k\($0)"), Node.string("some text")) })
        var writer = JSONWriter(format: .compact, chunkSize: 64) { _ in throw SinkFailed() }
        #expect(throws: SinkFailed.self) { try writer.writeFlushing(value) }
    }

    @Test func descriptionIsCompactJSON() throws {
        #expect(try node(#"{"b":[1],"a":"x"}"#).description == #"{"a":"x","b":[1]}"#)
    }
}
