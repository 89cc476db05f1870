import HearthCore
import HearthStore
import HTTPTypes
import HearthEngine
import Hummingbird

/// The ETag headers of a REST request (`X-Firebase-ETag`, `if-match`, `if-none-match`).
///
/// The ETag is the node hash of the value (docs/protocol.md §11), or `null_etag` for an empty location.
/// `if-match` makes a PUT or DELETE conditional: it is checked in write order against the
/// newest version, after the rules (which also require that the writer may read the
/// location), and a mismatch answers 412 with the current value and its ETag.
struct ETagConditions {
    static let nullETag = "null_etag"
    static let firebaseETag = HTTPField.Name("X-Firebase-ETag")!

    let askedForETag: Bool
    let ifMatch: String?
    let ifNoneMatch: String?

    init(_ request: Request, method: RESTRequest.Method) throws(HearthError) {
        askedForETag = request.headers.value(of: Self.firebaseETag)?.lowercased() == "true"
        ifMatch = request.headers.value(of: .ifMatch)
        ifNoneMatch = request.headers.value(of: .ifNoneMatch)
        if ifMatch != nil && method != .put && method != .delete {
            throw HearthError(.invalidQuery, "if-match is only supported on PUT and DELETE requests")
        }
        if ifNoneMatch != nil && method != .get {
            throw HearthError(.invalidQuery, "if-none-match is only supported on GET requests")
        }
    }

    /// True when the response carries an ETag: asked for, or any conditional request.
    var wantsETag: Bool { askedForETag || ifMatch != nil || ifNoneMatch != nil }

    /// The ETag of a value.
    static func etag(of value: Node) -> String {
        value.isNull ? nullETag : value.hash
    }

    /// The condition of an `if-match` write, or nil: the ETag is the node hash, `null_etag` for
    /// no value.
    var condition: DatabaseOperations.Condition? {
        ifMatch.map { .hash($0 == Self.nullETag ? "" : $0) }
    }

    /// The ETag header for a write's response: the ETag of the value it answers with, when
    /// one is wanted.
    func headers(for value: Node) -> HTTPFields {
        guard wantsETag else { return [:] }
        var headers = HTTPFields()
        headers[.eTag] = Self.etag(of: value)
        return headers
    }
}

extension ETagConditions {
    /// The answer to an `if-match` write whose ETag no longer matches: 412 with the current
    /// value and its ETag.
    static func mismatch(current: Node) -> Response {
        var headers = HTTPFields()
        headers[.eTag] = etag(of: current)
        return JSONResponse.make(status: .preconditionFailed, bytes: JSONWriter.bytes(current), headers: headers)
    }
}
