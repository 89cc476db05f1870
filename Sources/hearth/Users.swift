import ArgumentParser
import Foundation
import HearthAuth
import HearthCore
import HearthFunctions
import HearthSocialServer
import Logging

/// `hearth users`: manage accounts in a data folder (works while a server runs on it).
struct Users: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage user accounts (add, list, delete, custom claims, custom tokens).",
        subcommands: [Add.self, List.self, Delete.self, Claims.self, Token.self]
    )

    /// Options every `users` command takes.
    struct Options: ParsableArguments {
        @Option(name: .long, help: "The folder that holds the data.")
        var data: String = "hearth-data"

        @Option(name: .long, help: "The project ID tokens are made for.")
        var project: String = "hearth"

        func service() async throws -> AuthService {
            let clock: @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
            let folder = URL(fileURLWithPath: data)
            return try await AuthService.open(
                in: folder.appendingPathComponent("auth"), projectID: project,
                events: SocialFunctions.runs(in: folder)
                    ? AccountTriggerRecorder(
                        subscriptions: SocialFunctions.accountSubscriptions, projectID: project, backlog: EventBacklog(limit: 1000),
                        makeID: EventIDGenerator().next, now: clock)
                    : nil,
                clock: clock, logger: .cli())
        }
    }

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add an account; prints its uid (and the password when one is generated).")

        @Option(name: .long, help: "The email address to sign in with.")
        var email: String?

        @Option(name: .long, help: "The password (visible to other users of this machine; prefer --password-stdin).")
        var password: String?

        @Flag(name: .long, help: "Read the password from the first line of standard input.")
        var passwordStdin = false

        @Option(name: .long, help: "The display name.")
        var name: String?

        @Option(name: .long, help: "The uid (default: a new random one).")
        var uid: String?

        @Option(name: .long, help: #"Custom claims as a JSON object, e.g. '{"admin": true}'."#)
        var claims: String?

        @OptionGroup var options: Options

        func run() async throws {
            var fields = AuthService.AccountFields()
            fields.uid = uid
            fields.email = email
            fields.displayName = name
            var generated: String?
            if passwordStdin {
                guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                    throw ValidationError("no password on standard input")
                }
                fields.password = line
            } else if let password {
                fields.password = password
            } else if email != nil {
                generated = Self.randomPassword()
                fields.password = generated
            }
            if let claims { fields.customClaims = try Claims.parse(claims) }
            let user = try await Users.perform { try await options.service().createUser(fields) }
            print(user.uid)
            if let generated { print("password: \(generated)") }
        }

        static func randomPassword() -> String {
            let alphabet = Array("abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789")
            var generator = SystemRandomNumberGenerator()
            return String((0..<16).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] })
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List accounts, one per line.")

        @Flag(name: .long, help: "One JSON object per line instead of columns.")
        var json = false

        @OptionGroup var options: Options

        func run() async throws {
            let service = try await options.service()
            var pageToken: String?
            repeat {
                let (users, next) = try await Users.perform { try await service.listUsers(pageToken: pageToken, maxResults: 1000) }
                for user in users { print(json ? Self.json(user) : Self.line(user)) }
                pageToken = next
            } while pageToken != nil
        }

        static func line(_ user: UserRecord) -> String {
            var columns = [user.uid, user.email ?? "-", user.provider]
            columns.append(user.displayName.map { "\"\($0)\"" } ?? "-")
            if user.disabled { columns.append("disabled") }
            if user.customClaims.children != nil { columns.append(JSONWriter.string(user.customClaims)) }
            return columns.joined(separator: "  ")
        }

        static func json(_ user: UserRecord) -> String {
            let node = Node.object([
                (ChildKey("uid"), .string(user.uid)),
                (ChildKey("email"), user.email.map(Node.string) ?? .null),
                (ChildKey("displayName"), user.displayName.map(Node.string) ?? .null),
                (ChildKey("provider"), .string(user.provider)),
                (ChildKey("disabled"), .bool(user.disabled)),
                (ChildKey("customClaims"), user.customClaims),
                (ChildKey("createdAt"), .int(user.createdAt)),
            ])
            return JSONWriter.string(node)
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete accounts by uid.")

        @Argument(help: "The uids to delete.")
        var uids: [String]

        @OptionGroup var options: Options

        func run() async throws {
            let service = try await options.service()
            for uid in uids {
                try await Users.perform { try await service.deleteUser(uid: uid) }
                print("deleted \(uid)")
            }
        }
    }

    struct Claims: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show an account's custom claims, or set them (null clears them).")

        @Argument(help: "The uid.")
        var uid: String

        @Argument(help: #"The new claims as a JSON object, e.g. '{"admin": true}', or null."#)
        var claims: String?

        @OptionGroup var options: Options

        func run() async throws {
            let service = try await options.service()
            if let claims {
                var fields = AuthService.AccountFields()
                fields.customClaims = try Self.parse(claims)
                _ = try await Users.perform { try await service.updateUser(uid: uid, fields) }
            }
            var identifiers = AuthService.Identifiers()
            identifiers.uids = [uid]
            let users = try await Users.perform { try await service.users(matching: identifiers) }
            guard let user = users.first else { Users.fail("USER_NOT_FOUND: no account has the uid \(uid)") }
            print(user.customClaims.isNull ? "{}" : JSONWriter.string(user.customClaims))
        }

        static func parse(_ text: String) throws -> Node {
            guard let parsed = try? JSONParser.parse(Array(text.utf8)).node, parsed.isNull || parsed.children != nil else {
                throw ValidationError("claims must be a JSON object or null")
            }
            return parsed
        }
    }

    struct Token: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a custom token for a uid, to sign in with (accounts:signInWithCustomToken).")

        @Argument(help: "The uid the token signs in as.")
        var uid: String

        @OptionGroup var options: Options

        func run() async throws {
            let service = try await options.service()
            let now = Int64(Date().timeIntervalSince1970)
            print(try await service.issuer.customToken(uid: uid, now: now))
        }
    }

    /// Runs an account operation; a refusal is printed as `error: <CODE>` with exit status 1.
    static func perform<T>(_ work: () async throws -> T) async throws -> T {
        do {
            return try await work()
        } catch let error as AuthError {
            fail(error.message)
        }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("error: \(message)\n".utf8))
        Foundation.exit(1)
    }
}
