import HearthCore

/// Writes the server makes when this client's connection ends, as Firebase's
/// `OnDisconnect`: checked against the rules when registered, kept by the server.
/// Registered while offline, they are sent when the connection returns.
public struct OnDisconnect: Sendable {
    let ref: DatabaseReference

    /// Sets the value here when the connection ends.
    public func setValue(_ value: DatabaseValue) async throws {
        try await send("o", data: RealtimeMessage.json(value.node))
    }

    /// Sets several children here when the connection ends.
    public func updateChildValues(_ values: [String: DatabaseValue]) async throws {
        let fields = values.sorted { $0.key < $1.key }.map { ($0.key, RealtimeMessage.json($0.value.node)) }
        try await send("om", data: RealtimeMessage.object(fields))
    }

    /// Deletes the value here when the connection ends.
    public func removeValue() async throws {
        try await send("o", data: "null")
    }

    /// Drops what is registered here and below.
    public func cancel() async throws {
        try await send("oc", data: nil)
    }

    private func send(_ action: String, data: String?) async throws {
        var fields = [("p", RealtimeMessage.json(.string(RealtimeMessage.wirePath(ref.path))))]
        if let data { fields.append(("d", data)) }
        let receipt = DatabaseWrite.Receipt()
        ref.database.engine.request(action, body: RealtimeMessage.object(fields)) { receipt.finish($0) }
        try await receipt.wait()
    }
}
