import Testing
@testable import HearthCore

/// Key order, value order across types, and priority order (docs/protocol.md §10).
@Suite struct ChildKeyOrderTests {
    // MARK: - Integer keys

    @Test(arguments: [
        ("0", 0), ("7", 7), ("007", 7), ("-7", -7), ("-007", -7), ("-0", 0), ("00", 0),
        ("2147483647", 2_147_483_647), ("-2147483648", -2_147_483_648),
        ("000000000000001", 1), ("-0000000000002147483648", -2_147_483_648), ("1234567890", 1_234_567_890),
    ] as [(String, Int32)])
    func integerKeys(_ text: String, _ value: Int32) {
        #expect(ChildKey(text).integerValue == value)
    }

    @Test(arguments: [
        "", "-", "--1", "+1", " 1", "1 ", "1a", "a1", "1.0", "1e3", "0x1", "2147483648", "-2147483649",
        "9999999999", "12345678901", "00000000012345678901", "１",
    ])
    func nonIntegerKeys(_ text: String) {
        #expect(ChildKey(text).integerValue == nil)
    }

    // MARK: - Key order

    /// Keys in Firebase's order (docs/protocol.md §10): int32 keys numerically (shorter spelling first on a
    /// tie), then every other key by UTF-16 code units.
    static let orderedKeys = [
        "-2147483648", "-100", "-7", "-1",
        "0", "-0", "00", "-00", "000",
        "1", "7", "07", "007", "9", "10", "100", "2147483647",
        "!", "-", "--", "-2147483649", "-a", "0.5", "12345678901", "1a", "2147483648", "9999999999",
        "A", "Z", "_", "a", "a b", "aa", "ab", "a\u{1F600}", "b", "z", "~", "\u{7F}", "é", "ü", "中",
        "𝄞", "\u{1F600}", "\u{1F600}a", "\u{E000}", "\u{FB01}", "\u{FFFD}", "\u{FFFF}",
    ]

    @Test func keysSortInReferenceOrder() {
        let keys = Self.orderedKeys.map(ChildKey.init)
        var generator = SeededGenerator(seed: 1)
        for _ in 0..<20 {
            let sorted = keys.shuffled(using: &generator).sorted()
            #expect(sorted.map(\.string) == Self.orderedKeys)
        }
    }

    @Test func comparisonIsAStrictTotalOrderOnDistinctKeys() {
        let keys = Self.orderedKeys.map(ChildKey.init)
        for (i, left) in keys.enumerated() {
            for (j, right) in keys.enumerated() {
                let order = ChildKey.compare(left, right)
                let expected = i < j ? -1 : (i == j ? 0 : 1)
                #expect(order.signum() == expected, "\(left.string.debugDescription) vs \(right.string.debugDescription)")
                #expect((left < right) == (i < j))
            }
        }
    }

    @Test func specificReferenceExamples() {
        #expect(ChildKey("7") < ChildKey("007"))
        #expect(ChildKey("9") < ChildKey("10"))
        #expect(ChildKey("-1") < ChildKey("0"))
        #expect(ChildKey("2147483647") < ChildKey("2147483648"))  // int32 max is an integer key
        #expect(ChildKey("2147483648") < ChildKey("a"))  // overflow sorts as a string
        #expect(ChildKey("3") < ChildKey("2147483648"))
        #expect(ChildKey("-2147483649") > ChildKey("100"))
        #expect(ChildKey("10") < ChildKey("!"))  // every integer key before every other key
        // UTF-16 order: an astral character (a surrogate pair) sorts before U+E000…U+FFFF,
        // although its code point is larger.
        #expect(ChildKey("😀") < ChildKey("\u{E000}"))
        #expect(ChildKey("😀") < ChildKey("\u{FFFD}"))
        #expect(ChildKey("中") < ChildKey("😀"))
        #expect(ChildKey("x😀y") < ChildKey("x\u{F000}"))
        #expect(ChildKey.compare(ChildKey("same"), ChildKey("same")) == 0)
    }

    @Test func utf16OrderMatchesSwiftUTF16ViewOnRandomStrings() {
        let pool: [String] = ["a", "b", "A", "-", "0", "9", "é", "ß", "中", "\u{D7FF}", "\u{E000}", "\u{F000}", "\u{FFFD}", "\u{FFFF}", "😀", "😁", "𝄞", "\u{10FFFF}", " "]
        var generator = SeededGenerator(seed: 2)
        for _ in 0..<5_000 {
            let a = Self.randomString(from: pool, using: &generator)
            let b = Bool.random(using: &generator) ? Self.randomString(from: pool, using: &generator) : a + Self.randomString(from: pool, using: &generator)
            let expected = Self.utf16Compare(a, b)
            #expect(compareUTF16Order(a, b).signum() == expected, "\(a.debugDescription) vs \(b.debugDescription)")
            #expect(compareUTF16Order(b, a).signum() == -expected)
        }
    }

    @Test func keyOrderMatchesAReferenceModelOnRandomKeys() {
        var generator = SeededGenerator(seed: 3)
        var keys: [String] = []
        for _ in 0..<600 { keys.append(Self.randomKey(using: &generator)) }
        for left in keys {
            for _ in 0..<8 {
                let right = keys.randomElement(using: &generator)!
                let expected = Self.referenceCompare(left, right)
                #expect(ChildKey.compare(ChildKey(left), ChildKey(right)).signum() == expected, "\(left.debugDescription) vs \(right.debugDescription)")
            }
        }
        // Sorting with the comparator gives Firebase's order, as the SDKs' nameCompare gives it.
        let sorted = keys.map(ChildKey.init).sorted().map(\.string)
        let expected = keys.sorted { Self.referenceCompare($0, $1) < 0 }
        #expect(sorted == expected)
    }

    @Test func distinctKeysNeverCompareEqual() {
        // Distinct keys must never compare equal, or a tree would merge them into one child.
        let zeros = ["0", "-0", "00", "-00", "000", "0000000000", "-0000000000"]
        for a in zeros {
            for b in zeros where a != b {
                #expect(ChildKey.compare(ChildKey(a), ChildKey(b)) != 0, "\(a) vs \(b)")
            }
        }
        var children = Children()
        for (index, name) in zeros.enumerated() { children.insert(ChildKey(name), .int(Int64(index))) }
        #expect(children.count == zeros.count)
        for (index, name) in zeros.enumerated() { #expect(children[ChildKey(name)] == .int(Int64(index))) }
    }

    // MARK: - Value order

    @Test func valuesOrderAcrossTypes() {
        let ordered: [Node] = [
            .null, .bool(false), .bool(true),
            .double(-1e300), .int(-5), .double(-1.5), .int(0), .double(0.5), .int(1), .double(1.25), .int(10), .int(Int64.max),
            .string(""), .string("0"), .string("10"), .string("9"), .string("A"), .string("a"), .string("aa"), .string("b"),
            .string("😀"), .string("\u{E000}"),
        ]
        for (i, left) in ordered.enumerated() {
            for (j, right) in ordered.enumerated() {
                let expected = i < j ? -1 : (i == j ? 0 : 1)
                #expect(SortValue.compare(SortValue(left), SortValue(right)).signum() == expected, "\(left) vs \(right)")
            }
        }
        let object = Node.object([(key("x"), .int(1))])
        for value in ordered {
            #expect(SortValue.compare(SortValue(value), SortValue(object)) < 0, "\(value) before objects")
        }
    }

    @Test func numbersCompareByValueWhateverTheirRepresentation() {
        #expect(SortValue.compare(SortValue(.int(2)), SortValue(.double(2.0))) == 0)
        #expect(SortValue.compare(SortValue(.int(2)), SortValue(.double(2.000001))) < 0)
        #expect(SortValue.compare(SortValue(.double(-0.0)), SortValue(.int(0))) == 0)
    }

    @Test func allObjectsAreEqualAndPrioritiesAreIgnored() throws {
        let small = try node(#"{"a":1}"#)
        let large = try node(#"{"z":{"y":[1,2,3]},"b":"c"}"#)
        #expect(SortValue.compare(SortValue(small), SortValue(large)) == 0)
        #expect(SortValue.compare(SortValue(.prioritized(.int(3), .number(-10))), SortValue(.int(3))) == 0)
        #expect(SortValue.compare(SortValue(.prioritized(.int(3), .string("z"))), SortValue(.int(4))) < 0)
    }

    @Test func tiesAreBrokenByKeyOrder() {
        let entries = [
            IndexEntry(value: SortValue(.int(1)), key: key("b")),
            IndexEntry(value: SortValue(.int(1)), key: key("10")),
            IndexEntry(value: SortValue(.double(1)), key: key("2")),
            IndexEntry(value: SortValue(.int(0)), key: key("z")),
            IndexEntry(value: SortValue(.null), key: key("zz")),
            IndexEntry(value: SortValue(.string("1")), key: key("0")),
        ]
        let sorted = entries.sorted { IndexEntry.compare($0, $1) < 0 }
        #expect(sorted.map(\.key.string) == ["zz", "z", "2", "10", "b", "0"])
    }

    // MARK: - Priority order

    @Test func prioritiesOrderNoneThenNumbersThenStrings() {
        let ordered: [Priority?] = [nil, .number(-10), .number(0), .number(2.5), .number(100), .string(""), .string("10"), .string("9"), .string("a"), .string("b")]
        for (i, left) in ordered.enumerated() {
            for (j, right) in ordered.enumerated() {
                let expected = i < j ? -1 : (i == j ? 0 : 1)
                #expect(SortValue.compare(SortValue(priority: left), SortValue(priority: right)).signum() == expected)
            }
        }
    }

    @Test func priorityOrderOfChildrenBreaksTiesByKey() throws {
        let value = try node(#"""
            {"a":1,"b":{".value":1,".priority":5},"c":{".value":1,".priority":2},"d":{".value":1,".priority":"x"},
             "e":{".value":1,".priority":"a"},"f":2,"g":{".priority":2,"k":1},"10":{".value":1,".priority":2},"9":3}
            """#)
        let ordered = Node.priorityOrdered(try #require(value.children)).map { $0.key.string }
        #expect(ordered == ["9", "a", "f", "10", "c", "g", "b", "e", "d"])
    }

    // MARK: - Helpers

    private static func randomString(from pool: [String], using generator: inout SeededGenerator) -> String {
        let length = Int.random(in: 0...4, using: &generator)
        return (0..<length).map { _ in pool.randomElement(using: &generator)! }.joined()
    }

    private static func randomKey(using generator: inout SeededGenerator) -> String {
        switch Int.random(in: 0..<6, using: &generator) {
        case 0: return String(Int.random(in: -20...20, using: &generator))
        case 1: return String(Int64.random(in: -3_000_000_000...3_000_000_000, using: &generator))
        case 2:
            let zeros = String(repeating: "0", count: Int.random(in: 1...3, using: &generator))
            let sign = Bool.random(using: &generator) ? "-" : ""
            return sign + zeros + String(Int.random(in: 0...30, using: &generator))
        case 3: return String(repeating: "9", count: Int.random(in: 9...12, using: &generator))
        default:
            let pool = ["a", "b", "A", "-", "0", "1", "9", " ", "_", "é", "中", "\u{E000}", "\u{FFFD}", "😀", "𝄞"]
            let text = randomString(from: pool, using: &generator)
            return text.isEmpty ? "k" : text
        }
    }

    /// -1, 0 or 1 comparing UTF-16 code units.
    static func utf16Compare(_ a: String, _ b: String) -> Int {
        let left = Array(a.utf16)
        let right = Array(b.utf16)
        if left == right { return 0 }
        return left.lexicographicallyPrecedes(right) ? -1 : 1
    }

    /// The JS SDK's nameCompare: int32 keys first by value then length, then UTF-16 order.
    static func referenceCompare(_ a: String, _ b: String) -> Int {
        switch (referenceInteger(a), referenceInteger(b)) {
        case let (x?, y?):
            if x != y { return x < y ? -1 : 1 }
            if a.utf16.count != b.utf16.count { return a.utf16.count < b.utf16.count ? -1 : 1 }
            return utf16Compare(a, b)
        case (.some, nil): return -1
        case (nil, .some): return 1
        case (nil, nil): return utf16Compare(a, b)
        }
    }

    /// `-?0*\d{1,10}` within Int32, written independently of ``ChildKey/integerValue``.
    static func referenceInteger(_ text: String) -> Int64? {
        var digits = Substring(text)
        if digits.hasPrefix("-") { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let significant = digits.drop { $0 == "0" }
        guard significant.count <= 10 else { return nil }
        guard let value = Int64(text) else { return nil }
        guard value >= Int64(Int32.min) && value <= Int64(Int32.max) else { return nil }
        return value
    }
}
