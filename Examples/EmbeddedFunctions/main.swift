// Hearth embedded in a Swift program, with a function written in Swift: FriendlyPix's hashtag
// index, kept by the server whatever client writes the posts.
//
//   swift run hearth-functions-example            # serves http://127.0.0.1:9100/, data in ./example-data
//   curl -X PUT -d '{"text": "sunset at #beach"}' 'http://127.0.0.1:9100/posts/p1.json?auth=<admin-token>'
//   curl 'http://127.0.0.1:9100/hashtags.json?auth=<admin-token>'     # {"beach": {"p1": true}}
//
// The admin token is printed at start and kept in example-data/admin-token.
import Foundation
import HearthCore
import HearthFunctions
import HearthServer
import HearthStore
import Logging
import Hummingbird
import Synchronization

var logger = Logger(label: "example")
logger.logLevel = .info
let data = URL(fileURLWithPath: "example-data", isDirectory: true)
let folderBox = Mutex<DataFolder?>(nil)

/// The hashtags of a post's text, lowercased.
func hashtags(in value: Node) -> Set<String> {
    guard case .string(let text) = value.child(ChildKey("text")) else { return [] }
    return Set(text.split(whereSeparator: \.isWhitespace).filter { $0.hasPrefix("#") && $0.count > 1 }.map {
        String($0.dropFirst().filter { $0.isLetter || $0.isNumber }).lowercased()
    }.filter { !$0.isEmpty })
}

// Runs after every change to a post, in commit order, at least once: it only sets what the
// post's text implies, so running it twice does no harm.
let indexHashtags = try FunctionDefinition.onValue(.written, ref: "posts/{postId}", name: "indexHashtags") { event in
    guard let postID = event.parameters["postId"], let folder = folderBox.withLock({ $0 }) else { return }
    let database = try folder.database(named: event.instance)
    let removed = hashtags(in: event.before).subtracting(hashtags(in: event.after))
    let added = hashtags(in: event.after)
    var entries: [(path: Path, value: JSONParser.Parsed)] = []
    for tag in removed { entries.append((try Path(parsing: "\(tag)/\(postID)"), try JSONParser.parse(Array("null".utf8)))) }
    for tag in added { entries.append((try Path(parsing: "\(tag)/\(postID)"), try JSONParser.parse(Array("true".utf8)))) }
    guard !entries.isEmpty else { return }
    try await database.write(.update(try Path(parsing: "hashtags"), entries), origin: .admin)
}

let functions = try FunctionsService(
    functions: [indexHashtags], naming: .init(databaseHost: "127.0.0.1:9100"),
    backlog: EventBacklog(limit: 100_000), environment: DeliveryLane.Environment(
        now: { Int64(Date().timeIntervalSince1970 * 1000) }, logger: logger))
var options = DatabaseOptions()
options.eventRecorder = functions.recorder
let folder = try DataFolder(url: data, options: options, logger: logger)
folderBox.withLock { $0 = folder }
var configuration = ServerConfiguration(
    host: "127.0.0.1", port: 9100, dataFolder: data, defaultRules: #"{"rules": {".read": true, "posts": {".write": true}}}"#)
let tokenFile = data.appendingPathComponent("admin-token")
if let saved = try? String(contentsOf: tokenFile, encoding: .utf8) {
    configuration.adminToken = saved.trimmingCharacters(in: .whitespacesAndNewlines)
} else {
    var random = SystemRandomNumberGenerator()
    let token = (0..<32).map { _ in String(UInt8.random(in: 0...255, using: &random), radix: 16) }.joined()
    try token.write(to: tokenFile, atomically: true, encoding: .utf8)
    configuration.adminToken = token
}
FileHandle.standardOutput.write(Data("Admin token: \(configuration.adminToken!)\n".utf8))
let app = try await buildApplication(configuration: configuration, folder: folder, functions: functions, logger: logger)
// Hummingbird's runService: runs the server and its services until SIGINT or SIGTERM.
try await app.runService()
