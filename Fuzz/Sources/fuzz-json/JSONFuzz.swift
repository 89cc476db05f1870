import FuzzSupport
import HearthCore

/// Request bodies (`PUT`, `PATCH`, the realtime protocol's `d`): JSON read as data, as a
/// multi-path update, as a document with any keys (token claims) and as an envelope's members.
/// What parses must write back out and parse to the same value, and apply as a write to a
/// small database whose kept indexes answer queries as a scan of the data does.
@main
struct JSONFuzz {
    static func main() {
        Fuzzer.run { bytes in
            _ = try? JSONParser.parseDocument(bytes)
            _ = try? JSONParser.members(ofObject: bytes)
            if let parsed = try? JSONParser.parse(bytes) {
                checkRoundTrip(parsed)
                for path in Fixture.writePaths { Fixture.check(.set(path, parsed)) }
            }
            if let update = try? JSONParser.parseUpdate(bytes) {
                Fixture.check(.update(Fixture.scores, update))
                Fixture.check(.update(.root, update))
            }
        }
    }

    /// Written in the export format (priorities kept, no arrays made), the value parses back
    /// the same; written compactly, it still parses.
    static func checkRoundTrip(_ parsed: JSONParser.Parsed) {
        let exported = JSONWriter.bytes(parsed.node, format: JSONWriter.Format(export: true))
        do {
            let again = try JSONParser.parse(exported)
            Fuzzer.expect(again.node == parsed.node, "export round trip changed the value: \(JSONWriter.string(parsed.node))")
            Fuzzer.expect(again.hasServerValues == parsed.hasServerValues, "export round trip changed server values")
        } catch {
            Fuzzer.expect(false, "the export of a parsed value does not parse: \(error)")
        }
        for format in [JSONWriter.Format.compact, JSONWriter.Format(pretty: true)] {
            let written = JSONWriter.bytes(parsed.node, format: format)
            Fuzzer.expect((try? JSONParser.parse(written)) != nil, "written JSON does not parse: \(String(decoding: written, as: UTF8.self))")
        }
        _ = parsed.node.hash
    }
}

/// A small database with indexes, as rules' `.indexOn` would keep them.
enum Fixture {
    static let scores = Path(keys: [ChildKey("scores")])
    static let writePaths: [Path] = [
        .root, scores, Path(keys: [ChildKey("scores"), ChildKey("b")]),
        Path(keys: [ChildKey("scores"), ChildKey("b"), ChildKey("n")]),
    ]
    static let orders: [Query.Order] = [.value, .child(Path(keys: [ChildKey("n")])), .key, .priority]

    static let state: DatabaseState = {
        let data = #"""
            {"scores": {"a": {"n": 1, "m": "x"}, "b": {"n": 2.5, ".priority": 3}, "c": {"n": "z"},
                        "d": {"n": true}, "1": {"n": null, "m": 1}, "-2": 7, "e": {"n": {"deep": 1}}}}
            """#
        var state = DatabaseState(root: try! JSONParser.parse(Array(data.utf8)).node)
        for order in orders where order != .key && order != .priority {
            state = state.addingIndex(at: scores, order: order)
            state = state.addingIndex(at: .root, order: order)
        }
        return state
    }()

    static let queries: [Query] = orders.flatMap { order -> [Query] in
        [
            Query(order: order),
            Query(order: order, limit: .first(2)),
            Query(order: order, limit: .last(3)),
            Query(order: order, start: Query.Bound(value: .int(2)), end: Query.Bound(value: .string("z"))),
            Query.equal(order: order, value: .int(1)),
            Query(order: order, start: Query.Bound(value: .null, key: ChildKey("b"), inclusive: false), limit: .first(4)),
        ]
    }

    /// Applies `write` (when it is valid) and checks the kept indexes against scans.
    static func check(_ write: Write) {
        guard let (next, resolved) = try? state.applying(write, now: 1_700_000_000_000) else { return }
        let replayed = state.applying(resolved)
        Fuzzer.expect(replayed.root == next.root, "replaying the logged write gives another tree")
        for path in [Path.root, scores] {
            for query in queries {
                let indexed = next.run(query, at: path)
                let scanned = next.root.child(at: path).run(query)
                Fuzzer.expect(
                    indexed.map(\.key) == scanned.map(\.key) && zip(indexed, scanned).allSatisfy { $0.value == $1.value },
                    "the index at \(path) answers \(query) with \(indexed.map(\.key)), a scan with \(scanned.map(\.key))")
                _ = next.queryValue(query, at: path)
            }
        }
    }
}
