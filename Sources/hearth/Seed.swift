import ArgumentParser
import Foundation
import HearthSocial
import Logging

/// `hearth seed`: fills a running server with the demo social app's people, posts, photos,
/// comments, stars, follows and a conversation (the server must run the app's rules).
struct Seed: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load the demo people, posts (with photos), comments, stars, follows and a chat into a running server.")

    @Option(name: .long, help: "The server to fill.")
    var url: String = "http://127.0.0.1:9000"

    @Option(name: .long, help: "The domain of the demo email addresses.")
    var emailDomain: String = "demo.hearth"

    func run() async throws {
        guard let server = URL(string: url), server.scheme != nil else { throw ValidationError("--url must be a URL.") }
        do {
            let accounts = try await DemoData.seed(url: server, emailDomain: emailDomain)
            print(Self.describe(accounts))
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(1)
        }
    }

    static func describe(_ accounts: [DemoData.Account]) -> String {
        "Demo accounts (email / password):\n" + accounts.map { "  \($0.email)  \($0.password)  (\($0.name))" }.joined(separator: "\n")
    }

    /// Where a demo data folder remembers its accounts.
    static let accountsFile = "demo-accounts.json"

    /// For `serve --demo`: seeds once per data folder (remembering the accounts in
    /// `<data>/demo-accounts.json`, readable by its owner only) and prints them at every start.
    static func demoAccounts(in folder: URL, server: URL, logger: Logger) async {
        let file = folder.appendingPathComponent(accountsFile)
        if let data = try? Data(contentsOf: file), let accounts = try? JSONDecoder().decode([DemoData.Account].self, from: data) {
            FileHandle.standardOutput.write(Data("Open \(server.absoluteString)/ for the demo app.\n\(describe(accounts))\n".utf8))
            return
        }
        do {
            let accounts = try await DemoData.seed(url: server)
            let data = try JSONEncoder().encode(accounts)
            if !FileManager.default.createFile(atPath: file.path, contents: data, attributes: [.posixPermissions: 0o600]) {
                // The content is there; only `hearth serve` will not list the accounts at start.
                FileHandle.standardError.write(Data("Could not write \(file.path); the demo accounts are listed below only.\n".utf8))
            }
            FileHandle.standardOutput.write(Data("Made the demo content. Open \(server.absoluteString)/ for the demo app.\n\(describe(accounts))\n".utf8))
        } catch {
            logger.error("the demo content could not be made", metadata: ["error": "\(error)"])
        }
    }
}
