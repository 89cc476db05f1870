import ArgumentParser
import Foundation
import HearthCluster
import Logging
import PostgresNIO

/// `hearth cluster`: looks at a cluster through its PostgreSQL.
struct Cluster: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Look at a Hearth cluster (nodes sharing one PostgreSQL).",
        subcommands: [Status.self, ShowAdminToken.self]
    )

    /// Runs `body` with a running client of the cluster at `url`.
    static func withClient<T: Sendable>(
        url: String, _ body: @escaping @Sendable (PostgresClient, Logger) async throws -> T
    ) async throws -> T {
        let configuration: PostgresClient.Configuration
        do {
            configuration = try ClusterNode.clientConfiguration(url: url)
        } catch let error as ClusterURLError {
            throw ValidationError(error.description)
        }
        var quiet = Logger(label: "hearth-cluster")
        quiet.logLevel = .critical
        let logger = quiet
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { await client.run(); return nil }
            group.addTask {
                do {
                    return try await body(client, logger)
                } catch let error as ValidationError {
                    throw error
                } catch {
                    throw ValidationError(
                        "cannot read the cluster at \(ClusterURLError(text: url, problem: "").shownURL): \(String(reflecting: error))")
                }
            }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let result { return result }
            }
            throw ValidationError("the cluster's client stopped")
        }
    }

    /// `hearth cluster admin-token`: the admin token the cluster's first node made.
    struct ShowAdminToken: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "admin-token", abstract: "Print the cluster's admin token (made by its first node).")

        @Option(name: .long, help: "The cluster's PostgreSQL URL, as given to hearth serve --cluster.")
        var cluster: String

        func run() async throws {
            let token = try await Cluster.withClient(url: cluster) { client, logger in
                try await ClusterSecrets(client: client, logger: logger).value(name: "admin-token") ?? ""
            }
            guard !token.isEmpty else {
                throw ValidationError("this cluster has no admin token: its nodes were started with --admin-token")
            }
            print(token)
        }
    }

    /// `hearth cluster status`: every node, alive or not, how far it applied each database's
    /// log and how far behind the log's head it is.
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the cluster's nodes, their applied log positions and lag.")

        @Option(name: .long, help: "The cluster's PostgreSQL URL, as given to hearth serve --cluster.")
        var cluster: String

        @Flag(name: .long, help: "Print JSON instead of a table.")
        var json = false

        func run() async throws {
            let statuses = try await Cluster.withClient(url: cluster) { client, logger in
                try await ClusterNodes(client: client, logger: logger).status()
            }
            print(json ? Self.json(statuses) : Self.table(statuses), terminator: "")
        }

        static func table(_ nodes: [ClusterNodes.Status]) -> String {
            guard !nodes.isEmpty else { return "No node has joined this cluster.\n" }
            var rows = [["NODE", "STATE", "ADDRESS", "LAST SEEN", "DATABASE", "APPLIED", "LAG"]]
            for node in nodes {
                let state = node.alive ? "alive" : node.takenOverBy.map { "dead (taken over by \($0))" } ?? "dead"
                let seen = String(format: "%.1fs ago", node.silentSeconds)
                let databases = node.applied.keys.sorted()
                if databases.isEmpty {
                    rows.append([node.id, state, node.address, seen, "-", "-", "-"])
                }
                for (index, database) in databases.enumerated() {
                    let first = index == 0
                    rows.append([
                        first ? node.id : "", first ? state : "", first ? node.address : "", first ? seen : "", database,
                        "\(node.applied[database] ?? 0)", "\(node.lag[database] ?? 0)",
                    ])
                }
            }
            let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
            return rows.map { row in
                row.enumerated().map { column, text in
                    column == row.count - 1 ? text : text.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                }.joined(separator: "  ")
            }.joined(separator: "\n") + "\n"
        }

        static func json(_ nodes: [ClusterNodes.Status]) -> String {
            let objects: [[String: Any]] = nodes.map { node in
                var object: [String: Any] = [
                    "id": node.id, "address": node.address, "alive": node.alive, "silentSeconds": node.silentSeconds,
                    "applied": node.applied, "lag": node.lag,
                ]
                if let by = node.takenOverBy { object["takenOverBy"] = by }
                return object
            }
            let data = (try? JSONSerialization.data(withJSONObject: ["nodes": objects], options: [.prettyPrinted, .sortedKeys])) ?? Data()
            return String(decoding: data, as: UTF8.self) + "\n"
        }
    }
}
