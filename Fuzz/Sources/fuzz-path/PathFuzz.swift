import FuzzSupport
import HTTPTypes
import HearthCore
import Hummingbird

@testable import HearthEngine
@testable import HearthServer

/// Paths and keys: a REST URL's path (percent-decoded as the server does), a `/`-separated
/// path, and three keys, whose order must be a total order (Firebase's: integers first, then
/// the rest by UTF-16 code units).
@main
struct PathFuzz {
    static func main() {
        Fuzzer.run { bytes in
            let parts = Fuzzer.sections(bytes, count: 3)
            let text = Fuzzer.text(bytes)
            checkPath(text)
            checkRESTPath(text)
            checkOrder(parts.map { ChildKey(Fuzzer.text($0)) })
        }
    }

    /// A path that parses prints as text that parses to the same path.
    static func checkPath(_ text: String) {
        _ = Path.isValidKey(text)
        for allowPriority in [false, true] {
            guard let path = try? Path(parsing: text, allowPriority: allowPriority) else { continue }
            Fuzzer.expect(path.count <= Path.maxDepth, "a path of \(path.count) keys parsed")
            let again = try? Path(parsing: path.description, allowPriority: allowPriority)
            Fuzzer.expect(again == path, "\(path) does not parse back from its text")
            Fuzzer.expect(Path.compare(path, path) == 0, "\(path) is not equal to itself")
            if let parent = path.parent { Fuzzer.expect(parent.contains(path), "\(parent) does not contain its child \(path)") }
        }
    }

    /// The path of a REST request for `/<text>.json`, read as the database responder reads it.
    static func checkRESTPath(_ text: String) {
        let head = HTTPRequest(method: .get, scheme: "http", authority: "localhost", path: "/" + text + ".json")
        let request = Request(head: head, body: RequestBody(buffer: ByteBuffer()))
        guard let rest = try? RESTRequest(request) else { return }
        // One key per segment of the URL's path: a decoded "%2F" never splits a key.
        let segments = request.uri.path.dropLast(5).unicodeScalars.split(separator: "/")
        Fuzzer.expect(rest.path.count == segments.count, "the URL path \(request.uri.path) gave the path \(rest.path)")
        for key in rest.path.keys.dropLast() {
            Fuzzer.expect(Path.isValidKey(key.string), "the URL \(text) gave the invalid key \(key)")
        }
        if let last = rest.path.last {
            Fuzzer.expect(Path.isValidKey(last.string) || last.string == ".priority", "the URL \(text) gave the invalid key \(last)")
        }
    }

    /// The key order is antisymmetric and transitive, integer keys come first, and other keys
    /// are in UTF-16 code unit order.
    static func checkOrder(_ keys: [ChildKey]) {
        for key in keys {
            Fuzzer.expect(key.integerValue == expectedInteger(key.string), "the integer value of \(key) is \(String(describing: key.integerValue))")
            if let index = key.arrayIndex { Fuzzer.expect(Int(key.integerValue ?? -1) == index, "\(key) is array index \(index)") }
            Fuzzer.expect(ChildKey.compare(key, key) == 0, "\(key) is not equal to itself")
        }
        for a in keys {
            for b in keys {
                let order = sign(ChildKey.compare(a, b))
                Fuzzer.expect(order == -sign(ChildKey.compare(b, a)), "\(a) and \(b) are not ordered both ways alike")
                Fuzzer.expect((order == 0) == (a == b), "\(a) and \(b) compare \(order) but == says \(a == b)")
                Fuzzer.expect((order == 0) == (a.hashValue == b.hashValue) || order != 0, "equal keys \(a) and \(b) hash apart")
                switch (a.integerValue, b.integerValue) {
                case (.some, nil): Fuzzer.expect(order < 0, "integer key \(a) is not before \(b)")
                case (nil, nil):
                    let utf16 = a.string.utf16.lexicographicallyPrecedes(b.string.utf16) ? -1 : (a.string.utf16.elementsEqual(b.string.utf16) ? 0 : 1)
                    Fuzzer.expect(order == utf16, "\(a) and \(b) compare \(order), in UTF-16 \(utf16)")
                default: break
                }
                for c in keys where order <= 0 && sign(ChildKey.compare(b, c)) <= 0 {
                    Fuzzer.expect(ChildKey.compare(a, c) <= 0, "\(a) ≤ \(b) ≤ \(c) but not \(a) ≤ \(c)")
                }
            }
        }
    }

    static func sign(_ value: Int) -> Int { value < 0 ? -1 : (value > 0 ? 1 : 0) }

    /// Firebase's integer keys, written out independently: `-?0*\d{1,10}` within 32 bits.
    static func expectedInteger(_ text: String) -> Int32? {
        var digits = Array(text.utf8)[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        while digits.count > 1, digits.first == 48 { digits = digits.dropFirst() }
        guard digits.count <= 10 else { return nil }
        let value = digits.reduce(Int64(0)) { $0 * 10 + Int64($1 - 48) } * (negative ? -1 : 1)
        return Int32(exactly: value)
    }
}
