import Foundation
import HearthAuth
import HearthCore

/// Reads a blocking function's HTTP answer as Firebase's Auth does: a 2xx with
/// `{"userRecord": {…, "updateMask": "displayName,customClaims"}}` changes the fields the mask
/// names (`{}` changes nothing); any other status refuses, with the function's answer in the
/// message the client gets (`BLOCKING_FUNCTION_ERROR_RESPONSE : HTTP Cloud Function returned
/// an error: {"error": …}`).
enum BlockingFunctionAnswer {
    static func parse(status: Int, body: [UInt8]) throws(AuthError) -> AccountBlockingResponse {
        let text = String(decoding: body, as: UTF8.self)
        guard (200..<300).contains(status) else {
            throw AccountBlockingResponse.refusal("HTTP Cloud Function returned an error: \(text.prefix(2000))")
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw AccountBlockingResponse.refusal("Response body is not valid JSON.")
        }
        guard let record = object["userRecord"] else { return AccountBlockingResponse() }
        guard let fields = record as? [String: Any], let mask = fields["updateMask"] as? String else {
            throw AccountBlockingResponse.refusal("Response UserRecord is missing updateMask.")
        }
        var answer = AccountBlockingResponse()
        for name in mask.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            switch name {
            case "displayName":
                answer.displayName = .some(try string(fields[name], name))
            case "photoURL", "photoUrl":
                answer.photoURL = .some(try string(fields["photoURL"] ?? fields["photoUrl"], name))
            case "disabled":
                answer.disabled = try bool(fields[name], name)
            case "emailVerified":
                answer.emailVerified = try bool(fields[name], name)
            case "customClaims":
                answer.customClaims = try claims(fields[name], name)
            case "sessionClaims":
                answer.sessionClaims = try claims(fields[name], name)
            default:
                continue  // Fields Hearth does not keep (a reCAPTCHA override) change nothing.
            }
        }
        return answer
    }

    /// A string field; null (or absent) removes the field.
    private static func string(_ value: Any?, _ name: String) throws(AuthError) -> String? {
        switch value {
        case nil, is NSNull: return nil
        case let text as String: return text
        default: throw AccountBlockingResponse.refusal("Response UserRecord's \(name) is not a string.")
        }
    }

    private static func bool(_ value: Any?, _ name: String) throws(AuthError) -> Bool {
        guard let flag = value as? Bool else { throw AccountBlockingResponse.refusal("Response UserRecord's \(name) is not a boolean.") }
        return flag
    }

    private static func claims(_ value: Any?, _ name: String) throws(AuthError) -> Node {
        guard let value, !(value is NSNull) else { return .null }
        guard value is [String: Any], let bytes = try? JSONSerialization.data(withJSONObject: value),
            let node = try? JSONParser.parse(Array(bytes)).node
        else { throw AccountBlockingResponse.refusal("Response has malformed \(name).") }
        return node
    }
}
