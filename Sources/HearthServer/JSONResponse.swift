import HearthCore
import Hummingbird

/// Builds the JSON responses of the REST API.
enum JSONResponse {
    static let contentType = "application/json; charset=utf-8"

    static func make(status: HTTPResponse.Status = .ok, bytes: [UInt8], headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = contentType
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func make(status: HTTPResponse.Status = .ok, node: Node, format: JSONWriter.Format) -> Response {
        make(status: status, bytes: JSONWriter.bytes(node, format: format))
    }

    /// `204 No Content`, for `print=silent`.
    static func silent() -> Response {
        Response(status: .noContent)
    }
}
