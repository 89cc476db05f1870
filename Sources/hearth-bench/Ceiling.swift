import ArgumentParser
import Hummingbird
import Logging

/// A bare Hummingbird server answering "ok": the ceiling of the HTTP layer on this machine.
struct Ceiling: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve a bare Hummingbird route that answers \"ok\" to GET on / and POST anywhere (the HTTP ceiling)."
    )

    @Option var host: String = "127.0.0.1"
    @Option var port: Int = 9001

    func run() async throws {
        let router = Router()
        router.get("/") { _, _ in "ok" }
        router.post("/") { request, _ in
            // Read the body as Hearth does, so the comparison is fair.
            _ = try await request.body.collect(upTo: 1 << 20)
            return "ok"
        }
        // Any path, for webhook deliveries (bench-functions gives each function a path of its own).
        router.post("/**") { request, _ in
            _ = try await request.body.collect(upTo: 1 << 20)
            return "ok"
        }
        var logger = Logger(label: "ceiling")
        logger.logLevel = .warning
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port)),
            logger: logger
        )
        try await app.runService()
    }
}
