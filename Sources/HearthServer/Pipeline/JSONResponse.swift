import Foundation
import HearthCore
import HTTPTypes
import HearthEngine
import Hummingbird

/// Builds the JSON responses of the REST API.
enum JSONResponse {
    static let contentType = "application/json; charset=utf-8"

    static func make(status: HTTPResponse.Status = .ok, bytes: [UInt8], headers: HTTPFields = [:]) -> Response {
        make(status: status, buffer: ByteBuffer(bytes: bytes), headers: headers)
    }

    static func make(status: HTTPResponse.Status = .ok, buffer: ByteBuffer, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        if fields.isEmpty {
            fields.append(contentTypeField)
        } else {
            fields[.contentType] = contentType
        }
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: buffer))
    }

    /// Made once: a field checks its value when made.
    private static let contentTypeField = HTTPField(name: .contentType, value: contentType)

    static func make(status: HTTPResponse.Status = .ok, node: Node, format: JSONWriter.Format) -> Response {
        make(status: status, bytes: JSONWriter.bytes(node, format: format))
    }

    /// `value` as JSON (keys sorted, slashes as they are), or a Firebase-shaped 500 should it
    /// not encode: the answers of the account, storage and admin endpoints.
    static func encoding(
        _ value: some Encodable, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:],
        contentType: String = contentType, pretty: Bool = false, dates: JSONEncoder.DateEncodingStrategy = .iso8601
    ) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = dates
        guard let body = try? encoder.encode(value) else {
            return HearthError(.internalError, "Internal server error.").response()
        }
        var fields = headers
        fields[.contentType] = contentType
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// `204 No Content`, for `print=silent`.
    static func silent() -> Response {
        Response(status: .noContent)
    }
}
