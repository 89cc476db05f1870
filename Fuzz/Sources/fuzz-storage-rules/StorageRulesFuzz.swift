import FuzzSupport
import HearthCore
import HearthFiles

/// The storage rules language (`storage.rules`): a document parsed, then every method decided
/// for an object name of the input, by the user of the input's token claims, with an incoming
/// and an existing object whose content type and metadata come from the input.
///
/// The input is NUL-separated: the rules, the object name, the claims (JSON), the content type.
@main
struct StorageRulesFuzz {
    static func main() {
        Fuzzer.run { bytes in
            let parts = Fuzzer.sections(bytes, count: 4)
            guard let rules = try? StorageRules(parsing: Fuzzer.text(parts[0])) else { return }
            let rawName = Fuzzer.text(parts[1])
            if (try? ObjectName.validated(rawName)) != nil {
                // No empty, "." or ".." segment between any two "/".
                for segment in rawName.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
                    Fuzzer.expect(!segment.isEmpty && !segment.elementsEqual(".".utf8) && !segment.elementsEqual("..".utf8),
                        "the name \(rawName.debugDescription) has a bad segment")
                }
            }
            let name = (try? ObjectName.validated(rawName)) ?? "users/alice/photo.jpg"
            let claims = try? JSONParser.parseDocument(parts[2])
            let contentType = Fuzzer.text(parts[3])
            let incoming = object(name: name, contentType: contentType, size: Int64(parts[3].count) * 1000)
            let existing = object(name: name, contentType: "image/png", size: 2048)
            for method in StorageRulesDocument.Method.allCases {
                for (incoming, existing) in [(incoming, existing), (incoming, nil), (nil, existing)] as [(StoredObject?, StoredObject?)] {
                    let request = StorageRules.Request(
                        method: method, bucket: "hearth.appspot.com", name: method == .list ? prefix(of: name) : name,
                        authClaims: claims, time: 1_700_000_000_000, incoming: incoming, existing: existing)
                    _ = rules.allows(request)
                }
            }
        }
    }

    static func prefix(of name: String) -> String {
        String(name.split(separator: "/").dropLast().joined(separator: "/"))
    }

    static func object(name: String, contentType: String, size: Int64) -> StoredObject {
        StoredObject(
            bucket: "hearth.appspot.com", name: name, size: size, contentType: contentType, md5Hash: "1B2M2Y8AsgTpgAmY7PhCfg==",
            generation: 1_700_000_000_000_000, timeCreated: 1_700_000_000_000, updated: 1_700_000_000_000,
            cacheControl: "public, max-age=60", customMetadata: ["owner": "alice", "kind": contentType], downloadTokens: ["token"],
            blob: "blob")
    }
}
