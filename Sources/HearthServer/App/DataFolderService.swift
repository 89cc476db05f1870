import HearthEngine
import HearthStore
import ServiceLifecycle

/// Keeps the data folder open while the server runs and closes it (finishing commits and
/// writing a final snapshot) once the server has stopped taking requests.
struct DataFolderService: Service {
    let folder: DataFolder

    func run() async throws {
        try? await gracefulShutdown()
        folder.close()
    }
}
