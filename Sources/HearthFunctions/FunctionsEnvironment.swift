import Foundation

/// The environment functions run in: what Firebase's emulator gives them, pointing at this
/// server, so the Admin SDK inside (`firebase_admin.initialize_app()`, no arguments) reaches
/// its database, accounts and files with admin rights (through the server's functions port,
/// where the emulator credential `owner` is admin).
public struct FunctionsEnvironment: Sendable {
    public var projectID: String
    /// The server's functions port on 127.0.0.1.
    public var port: Int
    /// The database `firebase_admin.db` uses when given no URL.
    public var defaultDatabase: String
    public var storageBucket: String
    /// Variables given to every function as they are (the server's own environment, for PATH,
    /// HOME, the owner's settings).
    public var inherited: [String: String]
    /// The service-account key file the server writes for its functions
    /// (`GOOGLE_APPLICATION_CREDENTIALS`): Google's storage client, which `firebase_admin.storage`
    /// uses, wants a credential even when sent to this server.
    public var credentialsFile: String?

    public init(projectID: String, port: Int, defaultDatabase: String, storageBucket: String, inherited: [String: String]) {
        self.projectID = projectID
        self.port = port
        self.defaultDatabase = defaultDatabase
        self.storageBucket = storageBucket
        self.inherited = inherited
    }

    /// The variables of the process serving `function` (nil: the SDK's manifest server).
    public func variables(function: String?) -> [String: String] {
        let host = "127.0.0.1:\(port)"
        let config: [String: String] = [
            "projectId": projectID,
            "databaseURL": "http://\(host)/?ns=\(defaultDatabase)",
            "storageBucket": storageBucket,
        ]
        let configJSON = (try? JSONSerialization.data(withJSONObject: config, options: [.sortedKeys, .withoutEscapingSlashes]))
            .map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        var variables = inherited
        variables.merge([
            "GCLOUD_PROJECT": projectID,
            "GOOGLE_CLOUD_PROJECT": projectID,
            "FIREBASE_CONFIG": configJSON,
            "FIREBASE_DATABASE_EMULATOR_HOST": host,
            "FIREBASE_AUTH_EMULATOR_HOST": host,
            "FIREBASE_STORAGE_EMULATOR_HOST": host,
            "STORAGE_EMULATOR_HOST": "http://\(host)",
            "FUNCTIONS_EMULATOR": "true",
            "PYTHONUNBUFFERED": "1",
        ]) { _, new in new }
        if let credentialsFile { variables["GOOGLE_APPLICATION_CREDENTIALS"] = credentialsFile }
        return variables
    }
}
