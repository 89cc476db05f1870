import Testing
@testable import HearthCore

/// `JSONParser.members(ofObject:)`: an object's members as unparsed byte ranges, for envelopes
/// whose parts are read in different ways.
@Suite("JSON object members")
struct JSONParserMembersTests {
    static func members(_ text: String) throws -> [(String, String)] {
        let bytes = Array(text.utf8)
        return try JSONParser.members(ofObject: bytes).map { ($0.key, String(decoding: bytes[$0.value], as: UTF8.self)) }
    }

    @Test func membersKeepTheirOrderAndTheirTextUnparsed() throws {
        let found = try Self.members(#" { "t" : "d", "d" : {"a/b": [1, {"x.y": null}], "$c": "}"} , "n": -1.5e3, "z": true } "#)
        #expect(found.map(\.0) == ["t", "d", "n", "z"])
        #expect(found[0].1 == #""d""#)
        // Keys a database refuses are fine inside: nothing is checked but the JSON.
        #expect(found[1].1 == #"{"a/b": [1, {"x.y": null}], "$c": "}"}"#)
        #expect(found[2].1 == "-1.5e3")
        #expect(found[3].1 == "true")
        #expect(try Self.members("{}").isEmpty)
        #expect(try Self.members(#"{"e":""}"#).map(\.1) == [#""""#])
    }

    @Test(arguments: ["", "[]", "1", #""s""#, "{", #"{"a"}"#, #"{"a":}"#, #"{"a":1,}"#, #"{"a":1} x"#, #"{"a":[1,]}"#,
        #"{"a":{"b":tru}}"#, #"{a:1}"#, #"{"a":"\u12"}"#, #"{"a":01x}"#])
    func anythingButOneWellFormedObjectIsRefused(text: String) {
        #expect(throws: HearthError.self) { try JSONParser.members(ofObject: Array(text.utf8)) }
    }

    @Test func deepNestingIsRefusedNotOverflowed() {
        let deep = #"{"a":"# + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}"
        #expect(throws: HearthError.self) { try JSONParser.members(ofObject: Array(deep.utf8)) }
    }
}
