import Foundation
import HearthCore
@testable import HearthStore
import HearthTesting
import Testing

/// `replace(at:with:maxRecordBytes:)`: one atomic write logged as many bounded records.
@Suite("Chunked replace")
struct ReplaceTests {
    /// A tree with priorities at several levels and children far bigger than one record.
    static func bigTree() throws -> Node {
        var random = SeededRandom(seed: 99)
        var groups: [String] = []
        for group in 0..<6 {
            var members: [String] = []
            for member in 0..<25 {
                let filler = String(repeating: "abcdefghij", count: Int(random.next() % 8) + 1)
                let priority = member % 4 == 0 ? #",".priority":\#(member)"# : ""
                members.append(#""m\#(member)":{"text":"\#(filler)","n":\#(random.next() % 1000)\#(priority)}"#)
            }
            // One very large nested child with its own priority, deeper down.
            var deep: [String] = []
            for leaf in 0..<40 { deep.append(#""d\#(leaf)":"\#(String(repeating: "z", count: 30))""#) }
            members.append(#""deep":{"inner":{\#(deep.joined(separator: ",")),".priority":"inner-p"},".priority":7}"#)
            members.append(#""list":[1,2,3,{"x":[4,5]}]"#)
            members.append(#"".priority":"g\#(group)""#)
            groups.append(#""g\#(group)":{\#(members.joined(separator: ","))}"#)
        }
        groups.append(#"".priority":1.5"#)
        groups.append(#""small":{".value":true,".priority":"s"}"#)
        return try node("{" + groups.joined(separator: ",") + "}")
    }

    @Test func smallRecordLimitSplitsButRestoresTheSameTree() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let inspector = SQLiteInspector(folder: fixture.folder)
        let tree = try Self.bigTree()
        #expect(tree.estimatedSize > 20_000)
        #expect(tree.priority == .number(1.5))

        var database: Database? = try fixture.open()
        try await database!.write(set("/import", #"{"stale":{"x":1},"g0":{"m0":"old"}}"#))
        try await database!.write(set("/sibling", #"{"keep":"me",".priority":3}"#))
        try await database!.replace(at: try path("/import"), with: tree, maxRecordBytes: 500)

        #expect(database!.value(at: try path("/import")) == tree, "the whole value replaces the old one in memory")
        #expect(database!.value(at: try path("/import/stale")).isNull)
        let records = try inspector.logRecords()
        #expect(records.count > 40, "expected many bounded records, got \(records.count)")
        // Records after the two ordinary writes: a clear of the location, then pieces below it.
        #expect(records[2].kind == "set" && records[2].path == "/import")
        #expect(records.dropFirst(2).allSatisfy { $0.path.hasPrefix("/import") })
        #expect(records.contains { $0.path.hasSuffix("/.priority") }, "priorities of split objects are logged separately")
        let expected = database!.current.state.root
        #expect(expected.child(ChildKey("sibling")) == (try node(#"{"keep":"me",".priority":3}"#)))
        database = nil  // no final snapshot: the pieces are replayed

        let reopened = try fixture.open()
        let replayed = reopened.value(at: try path("/import"))
        #expect(replayed == tree, "replayed: \(exported(replayed).prefix(300))")
        #expect(reopened.current.state.root == expected)
        #expect(reopened.value(at: try path("/import/g3/deep/inner/.priority")) == .string("inner-p"))
        #expect(reopened.value(at: try path("/import/g3/deep/.priority")) == .double(7))
        #expect(reopened.value(at: try path("/import/.priority")) == .double(1.5))

        // And through a snapshot as well.
        reopened.close()
        #expect(try inspector.logSequences() == [])
        #expect(try fixture.open().current.state.root == expected)
    }

    @Test func replaceCommitsAsOneBatch() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let database = try fixture.open()
        let batches = SendableBox<[[Int64]]>([])
        database.events.subscribe { _, event in
            if case .committed(let committed, _) = event { batches.mutate { $0.append(committed.map(\.sequence)) } }
        }
        let tree = try Self.bigTree()
        try await database.replace(at: try path("/import"), with: tree, maxRecordBytes: 400)
        database.settle()
        let observed = batches.value
        #expect(observed.count == 1, "all pieces commit in one transaction")
        #expect((observed.first?.count ?? 0) > 40)
        #expect(database.current.sequence == Int64(observed.first?.count ?? 0))
    }

    @Test func replaceThatFitsIsASingleRecord() async throws {
        let fixture = try StoreFixture()
        defer { fixture.remove() }
        let database = try fixture.open()
        let value = try node(#"{"a":1,"b":{"c":"d"},".priority":"p"}"#)
        try await database.replace(at: try path("/x"), with: value)
        let records = try SQLiteInspector(folder: fixture.folder).logRecords()
        #expect(records.count == 1)
        #expect(records.first?.path == "/x")
        #expect(database.value(at: try path("/x")) == value)
        try await database.replace(at: try path("/x"), with: .null)
        #expect(database.value(at: try path("/x")).isNull)
        let reopened = try fixture.open()
        #expect(reopened.value(at: try path("/x")).isNull)
        #expect(reopened.current.sequence == 2)
    }
}
