import ArgumentParser

/// The `hearth` command: a self-hosted realtime database that speaks Firebase's protocols.
@main
struct Hearth: AsyncParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "hearth",
        abstract: "A self-hosted realtime JSON database that speaks the Firebase Realtime Database protocols.",
        version: version,
        subcommands: [Serve.self, Import.self, Export.self, Rules.self, Users.self, Admin.self, Files.self, Hosting.self, Seed.self, Cluster.self, Backup.self, Restore.self, History.self],
        defaultSubcommand: nil
    )
}
