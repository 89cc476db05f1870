import Testing
@testable import HearthCore

@Suite struct NodeHashTests {
    /// Every test vector of docs/protocol.md §11.
    @Test(arguments: [
        ("null", ""),
        ("true", "E5z61QM0lN/U2WsOnusszCTkR8M="),
        ("false", "aSSNoqcS4oQwJ2xxH20rvpp3zP0="),
        ("500", "Ajg9bohDwTVmqR14o1bVJnneryM="),
        (#""Hello World""#, "B8HWXc7zXMjrsnJxPRj7wrNGqt4="),
        (#"{"foo":"bar"}"#, "XnLeTeWQmzTHImTbSMDLg/qMrKY="),
        (#"{"z":1,"a":"2","b":"true","c":false}"#, "8qk5vmuZGXWJx+77SGwjYRM0yPA="),
        (#"{".priority":200,".value":"primitive"}"#, "R9u8hs9fhRzuQ2M/3BQ0uhxz5ys="),
        (#"{".priority":"high",".value":42}"#, "d/2FMFWchvDsa06RLXZhzvM9aQc="),
        (#"{".priority":128.256,"someKey":"value"}"#, "WYR8kBGna+a7E5x75zvhPhzACOQ="),
        (#"{".priority":"high","someKey":"value"}"#, "/KquMIGoCuKO/ipoLoQzqnU0BcI="),
        ("600613", "ViJFJowpbyRvgGNPzPJdGeN+mCY="),
    ] as [(String, String)])
    func referenceVectors(_ text: String, _ expected: String) throws {
        #expect(try node(text).hash == expected)
    }

    @Test func vectorsBuiltInCodeHashTheSame() {
        #expect(Node.null.hash == "")
        #expect(Node.bool(true).hash == "E5z61QM0lN/U2WsOnusszCTkR8M=")
        #expect(Node.int(500).hash == "Ajg9bohDwTVmqR14o1bVJnneryM=")
        #expect(Node.double(500).hash == "Ajg9bohDwTVmqR14o1bVJnneryM=")
        #expect(Node.prioritized(.int(42), .string("high")).hash == "d/2FMFWchvDsa06RLXZhzvM9aQc=")
        #expect(Node.prioritized(.string("primitive"), .number(200)).hash == "R9u8hs9fhRzuQ2M/3BQ0uhxz5ys=")
        let object = Node.object([(key("someKey"), .string("value"))])
        #expect(object.withPriority(.number(128.256)).hash == "WYR8kBGna+a7E5x75zvhPhzACOQ=")
    }

    @Test func numbersAreWrittenAsIEEE754Hex() {
        #expect(Node.ieee754Hex(500) == "407f400000000000")
        #expect(Node.ieee754Hex(1) == "3ff0000000000000")
        #expect(Node.ieee754Hex(0) == "0000000000000000")
        #expect(Node.ieee754Hex(-2) == "c000000000000000")
        #expect(Node.ieee754Hex(0.1) == "3fb999999999999a")
    }

    @Test func hashDependsOnValueTypeAndPriority() throws {
        let hashes = try ["1", #""1""#, "true", #"{"a":1}"#, #"{"a":"1"}"#, #"{"b":1}"#, #"{"a":1,".priority":1}"#, #"{".value":1,".priority":1}"#, #"{".value":1,".priority":"1"}"#]
            .map { try node($0).hash }
        #expect(Set(hashes).count == hashes.count)
        #expect(hashes.allSatisfy { $0.count == 28 && $0.hasSuffix("=") })
    }

    @Test func childrenAreHashedInPriorityOrder() throws {
        // Same children and priorities written in a different order: the same hash.
        let one = try node(#"{"b":{".value":1,".priority":1},"a":{".value":2,".priority":2}}"#)
        let two = try node(#"{"a":{".value":2,".priority":2},"b":{".value":1,".priority":1}}"#)
        #expect(one.hash == two.hash)
        // Priority order puts "b" first here, key order would put "a" first.
        #expect(Node.priorityOrdered(try #require(one.children)).map(\.key.string) == ["b", "a"])
        // Moving priorities changes which child is hashed first, and so the hash.
        let swapped = try node(#"{"a":{".value":2,".priority":1},"b":{".value":1,".priority":2}}"#)
        #expect(swapped.hash != one.hash)
    }

    @Test func arraysHashAsObjects() throws {
        #expect(try node("[1,2]").hash == (try node(#"{"0":1,"1":2}"#).hash))
    }
}
