import Foundation
import HearthClient
import HearthSocial
import HearthTesting
import Testing

/// The nodes the server side keeps (reports, moderated originals, admin requests, suspensions,
/// admins, push subscriptions and choices), through the REST API and the app's own rules: a
/// signed-out visitor reads and writes none of them, a signed-in person only their own entries
/// where there are any, and every refusal is Firebase's 401 "Permission denied" that changes
/// nothing. `pushConfig/` alone is public (it holds only the public key).
@Suite("Rules of the server side's nodes") @MainActor
struct ServerNodesRulesTests {
    static let adminOnly = ["reports", "reports/posts", "moderated", "moderated/posts", "adminRequests", "commentFlags"]

    @Test(.timeLimit(.minutes(10))) func outsidersAndOrdinaryPeopleAreRefusedAndNothingChanges() async throws {
        try await SocialHarness.with { harness in
            let server = harness.server
            let admin = ["Authorization": "Bearer \(TestServer.adminToken)"]
            // What the server side would have written, as the operator.
            let seeded = #"""
                {"reports": {"posts": {"p1": {"count": 2}}}, "moderated": {"posts": {"p1": {"title": "RAW"}}},
                 "adminRequests": {"r1": {"action": "dismiss"}}, "suspended": {"bob": true}, "admins": {"bob": true},
                 "pushSubscriptions": {"bob": {"AAAAAAAAAAAAAAAAAAAAAA": {"endpoint": "https://push.example.com/1"}}},
                 "notificationSettings": {"bob": {"like": false}}, "pushConfig": {"vapidPublicKey": "BPublicKey"},
                 "commentFlags": {"p1": {"c1": {"carol": true}}}}
                """#
            #expect(try await server.request("PATCH", "/.json", body: seeded, headers: admin).status == 200)
            let ann = try await harness.user("Ann Outsider")
            let annToken = try #require(try await ann.auth.idToken())
            let annID = try #require(ann.auth.currentUser?.uid)
            let signedIn = ["Authorization": "Bearer \(annToken)"]
            let personal = ["suspended/bob", "admins/bob", "pushSubscriptions/bob", "notificationSettings/bob"]
            let before = try await server.request("GET", "/.json", headers: admin).body

            for (who, headers) in [("signed out", [String: String]()), ("Ann", signedIn)] {
                for path in Self.adminOnly + personal {
                    let read = try await server.request("GET", "/\(path).json", headers: headers)
                    #expect(read.status == 401, "\(who) read \(path)")
                    #expect(String(decoding: read.body, as: UTF8.self).contains("Permission denied"), "\(who) read \(path)")
                    let write = try await server.request("PUT", "/\(path).json", body: #"{"x": 1}"#, headers: headers)
                    #expect(write.status == 401, "\(who) wrote \(path)")
                    let delete = try await server.request("DELETE", "/\(path).json", headers: headers)
                    #expect(delete.status == 401, "\(who) deleted \(path)")
                }
                // The public key is public; nobody but the server writes it.
                let key = try await server.request("GET", "/pushConfig/vapidPublicKey.json", headers: headers)
                #expect(key.status == 200 && String(decoding: key.body, as: UTF8.self) == #""BPublicKey""#, "\(who)")
                #expect(try await server.request("PUT", "/pushConfig/vapidPublicKey.json", body: #""mine""#, headers: headers).status == 401)
            }
            // Ann may not mark herself an admin, nor take her own suspension mark away.
            #expect(try await server.request("PUT", "/admins/\(annID).json", body: "true", headers: signedIn).status == 401)
            #expect(try await server.request("PUT", "/suspended/\(annID).json", body: "null", headers: signedIn).status == 401)
            // Her own choices she may read (empty) and set.
            #expect(try await server.request("GET", "/notificationSettings/\(annID).json", headers: signedIn).status == 200)
            #expect(try await server.request("PUT", "/notificationSettings/\(annID)/like.json", body: "false", headers: signedIn).status == 200)
            #expect(try await server.request("PUT", "/notificationSettings/\(annID)/other.json", body: "false", headers: signedIn).status == 401)
            _ = try await server.request("DELETE", "/notificationSettings/\(annID).json", headers: signedIn)

            // Nothing of what was refused changed anything.
            #expect(try await server.request("GET", "/.json", headers: admin).body == before)
        }
    }
}
