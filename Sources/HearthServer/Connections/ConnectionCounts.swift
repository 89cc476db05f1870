import HearthEngine
/// The arithmetic of ``ConnectionGate``: connections open in all and per peer address, and
/// requests in flight per client that trusted proxies forward. Free of I/O and locks; the gate
/// holds it under its lock.
struct ConnectionCounts: Sendable {
    /// Why a connection or a forwarded request is not taken.
    enum Refusal: Sendable, Equatable {
        /// The server holds ``ConnectionLimits/maxConnections``.
        case serverFull
        /// This address holds ``ConnectionLimits/maxConnectionsPerAddress``.
        case addressFull
    }

    /// nil: no cap.
    let maxConnections: Int?
    let maxPerAddress: Int?
    private(set) var open = 0
    /// Only addresses with something open: an address's entry goes with its last connection.
    private(set) var byAddress: [String: Int] = [:]
    private(set) var forwarded: [String: Int] = [:]

    init(maxConnections: Int?, maxPerAddress: Int?) {
        self.maxConnections = maxConnections
        self.maxPerAddress = maxPerAddress
    }

    /// Counts in a connection from `address`, unless a cap refuses it. A nil address (a
    /// trusted proxy, or a peer without one) counts only toward the server's total.
    mutating func openConnection(from address: String?) -> Refusal? {
        if let maxConnections, open >= maxConnections { return .serverFull }
        if let address {
            if let maxPerAddress, byAddress[address, default: 0] >= maxPerAddress { return .addressFull }
            byAddress[address, default: 0] += 1
        }
        open += 1
        return nil
    }

    /// Counts out a connection ``openConnection(from:)`` took, with the same address.
    mutating func closeConnection(from address: String?) {
        open -= 1
        if let address { Self.decrement(&byAddress, address) }
    }

    /// Counts in a request forwarded for `client`, unless that client has as many in flight
    /// as one address may hold connections.
    mutating func startForwarded(for client: String) -> Refusal? {
        if let maxPerAddress, forwarded[client, default: 0] >= maxPerAddress { return .addressFull }
        forwarded[client, default: 0] += 1
        return nil
    }

    mutating func endForwarded(for client: String) {
        Self.decrement(&forwarded, client)
    }

    private static func decrement(_ counts: inout [String: Int], _ key: String) {
        guard let count = counts[key] else { return }
        counts[key] = count > 1 ? count - 1 : nil
    }
}
