import ArgumentParser
import Foundation
import HearthAuth
import Logging

/// `hearth admin`: credentials for servers and tools that manage Hearth.
struct Admin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Admin credentials for servers and tools (service accounts).",
        subcommands: [ServiceAccount.self]
    )

    /// `hearth admin service-account`: key files that `firebase_admin` and Google's client
    /// libraries use as admin credentials (works while a server runs on the data folder).
    struct ServiceAccount: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "service-account",
            abstract: "Make, list and revoke service-account keys (admin credentials in Google's key-file form).",
            subcommands: [Create.self, List.self, Revoke.self]
        )

        static func accounts(_ options: Users.Options) async throws -> ServiceAccounts {
            let service = try await options.service()
            let clock: @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
            return ServiceAccounts(store: service.store, issuer: service.issuer, clock: clock, logger: .cli())
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a key and write its key file (the only copy of its private key).",
            discussion: """
                Give the file to the server or tool that needs admin access, e.g.
                firebase_admin.initialize_app(credentials.Certificate("key.json"), {...}).
                Its token_uri is <url>/oauth2/token: the client trades a signed assertion there
                for an access token that works for an hour, until the key is revoked.
                """)

        @Option(name: .long, help: "The account's name: 6 to 30 lower-case letters, digits and hyphens.")
        var name: String

        @Option(name: .long, help: "The server's address as the key's users reach it (its public URL).")
        var url: String = "http://127.0.0.1:9000"

        @Option(name: .long, help: "Where to write the key file (default: <name>-<key id>.json; - for standard output).")
        var out: String?

        @OptionGroup var options: Users.Options

        func run() async throws {
            let base = url.hasSuffix("/") ? String(url.dropLast()) : url
            let accounts = try await ServiceAccount.accounts(options)
            let (key, file) = try await Users.perform { try await accounts.create(name: name, tokenURI: base + "/oauth2/token") }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let bytes = try encoder.encode(file) + Data("\n".utf8)
            let destination = out ?? "\(name)-\(key.id.prefix(12)).json"
            if destination == "-" {
                FileHandle.standardOutput.write(bytes)
                return
            }
            // Readable by its owner only, and never over an existing file.
            guard !FileManager.default.fileExists(atPath: destination),
                FileManager.default.createFile(atPath: destination, contents: bytes, attributes: [.posixPermissions: 0o600])
            else {
                _ = try? await accounts.revoke(key.id)
                Users.fail("cannot write \(destination) (it exists, or the folder is not writable); the key was revoked")
            }
            print("\(key.clientEmail)  key \(key.id)  written to \(destination)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the keys: account, key ID, made, and revoked if so.")

        @OptionGroup var options: Users.Options

        func run() async throws {
            let formatter = ISO8601DateFormatter()
            func time(_ milliseconds: Int64) -> String { formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000)) }
            for key in try await ServiceAccount.accounts(options).keys() {
                var columns = [key.clientEmail, key.id, time(key.createdAt)]
                if let revoked = key.revokedAt { columns.append("revoked \(time(revoked))") }
                print(columns.joined(separator: "  "))
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a key (by its ID) or every key of an account (by its address).",
            discussion: "Its assertions get no more tokens at once; tokens already given stop working within seconds.")

        @Argument(help: "A key ID, or an account's address.")
        var key: String

        @OptionGroup var options: Users.Options

        func run() async throws {
            let revoked = try await Users.perform { try await ServiceAccount.accounts(options).revoke(key) }
            guard !revoked.isEmpty else { Users.fail("no working key is \(key) or belongs to it") }
            for key in revoked { print("revoked \(key.clientEmail)  key \(key.id)") }
        }
    }
}
