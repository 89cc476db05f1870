import Testing
@testable import HearthCore

/// A small, fast, seedable generator (SplitMix64) so randomized tests are reproducible.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Parses JSON text into a node (the way a PUT body is parsed).
func node(_ text: String) throws -> Node {
    try JSONParser.parse(Array(text.utf8)).node
}

/// Parses JSON text, keeping depth and server-value information.
func parsed(_ text: String) throws -> JSONParser.Parsed {
    try JSONParser.parse(Array(text.utf8))
}

/// Compact JSON text of a node.
func json(_ node: Node, _ format: JSONWriter.Format = .compact) -> String {
    JSONWriter.string(node, format: format)
}

/// The export-format (priorities included, no arrays) compact text of a node.
func exportJSON(_ node: Node) -> String {
    JSONWriter.string(node, format: JSONWriter.Format(export: true))
}

/// The error parsing `bytes` throws, or nil when it parses.
func parseError(_ bytes: [UInt8]) -> HearthError? {
    do throws(HearthError) {
        _ = try JSONParser.parse(bytes)
        return nil
    } catch {
        return error
    }
}

/// The error parsing `text` throws, or nil when it parses.
func parseError(_ text: String) -> HearthError? {
    parseError(Array(text.utf8))
}

/// The error `JSONParser.parseUpdate` throws for `text`, or nil when it parses.
func updateError(_ text: String) -> HearthError? {
    do throws(HearthError) {
        _ = try JSONParser.parseUpdate(Array(text.utf8))
        return nil
    } catch {
        return error
    }
}

/// A path from `/`-separated text; the text must be valid.
func path(_ text: String) -> Path {
    do {
        return try Path(parsing: text, allowPriority: true)
    } catch {
        Issue.record("invalid path in test: \(text)")
        return .root
    }
}

func key(_ text: String) -> ChildKey { ChildKey(text) }

/// The keys of a query result, in result order.
func keys(_ entries: [(key: ChildKey, value: Node)]) -> [String] {
    entries.map { $0.key.string }
}

extension DatabaseState {
    /// Applies a set of JSON text at a path, failing the test on error.
    func setting(_ text: String, at location: String, now: Int64 = 0) throws -> DatabaseState {
        try applying(.set(path(location), parsed(text)), now: now).0
    }
}

/// Firebase's exact texts (as its REST API answers them) for the errors the parser produces.
enum ReferenceText {
    static let unparseable = "Invalid data; couldn't parse JSON object, array, or value."
    static let notAnObject = "Invalid data; couldn't parse JSON object. Are you sending a JSON object with valid key names?"
    static func badKey(_ line: Int, _ column: Int) -> String {
        "Invalid data; couldn't parse key beginning at \(line):\(column). Key value can't be empty or contain $ # [ ] / or ."
    }
    static let invalidPath = "Invalid path: Invalid token in path"
}
