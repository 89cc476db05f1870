import Foundation
import HTTPTypes
import HearthEngine
import Hummingbird
import NIOCore

/// Which peers may speak for the browser behind them, through `X-Forwarded-For` (its address)
/// and `X-Forwarded-Proto` (whether it used TLS).
///
/// A reverse proxy on the same machine (the production setup: Hearth on loopback behind nginx)
/// is trusted without configuration; proxies elsewhere are named with `--trusted-proxy`. From
/// any other peer the headers are ignored, so a client cannot pick the address it is
/// rate-limited by or claim a TLS connection it does not have.
struct ProxyTrust: Sendable {
    /// Addresses of proxies on other machines, as `SocketAddress.ipAddress` writes them.
    let addresses: Set<String>
    /// Whether a peer on this machine counts as a proxy (``ServerConfiguration/trustLoopbackProxies``).
    let trustsLoopback: Bool

    init(addresses: some Sequence<String> = [], trustsLoopback: Bool = true) {
        self.addresses = Set(addresses)
        self.trustsLoopback = trustsLoopback
    }

    /// True when `peer` is a trusted proxy: a loopback address or a configured one.
    func trusts(_ peer: SocketAddress?) -> Bool {
        peer?.ipAddress.map(isProxy) ?? false
    }

    private func isProxy(_ address: String) -> Bool {
        addresses.contains(address) || (trustsLoopback && Self.isLoopback(address))
    }

    /// The browser's address: from a trusted proxy, the nearest address in `X-Forwarded-For`
    /// that is not itself a trusted proxy; otherwise the connection's peer.
    func clientAddress(of request: Request, peer: SocketAddress?) -> String {
        forwardedClient(of: request, peer: peer) ?? peer?.ipAddress ?? "unknown"
    }

    /// The address a trusted proxy forwarded this request for, or nil when the peer is not a
    /// trusted proxy or names no one (then the request is the peer's own).
    func forwardedClient(of request: Request, peer: SocketAddress?) -> String? {
        forwardedClient(forwardedFor: request.headers[values: .xForwardedFor], peer: peer)
    }

    /// ``forwardedClient(of:peer:)`` from the values of the request's `X-Forwarded-For` fields.
    func forwardedClient(forwardedFor values: [String], peer: SocketAddress?) -> String? {
        // No header names no one, whoever the peer is (asked on every request: the peer's
        // address is text made for each check).
        guard !values.isEmpty, trusts(peer) else { return nil }
        let forwarded = values
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        // Proxies append: the rightmost entries are the nearest hops.
        return forwarded.last { !isProxy($0) } ?? forwarded.first
    }

    /// `https` when the browser reached the server over TLS, as a trusted proxy says in
    /// `X-Forwarded-Proto`; otherwise `http` (Hearth itself does not terminate TLS).
    func scheme(of request: Request, peer: SocketAddress?) -> String {
        guard trusts(peer), let proto = request.headers[.forwardedProto]?.split(separator: ",").first else { return "http" }
        return proto.trimmingCharacters(in: .whitespaces).lowercased() == "https" ? "https" : "http"
    }

    static func isLoopback(_ address: String) -> Bool {
        address.hasPrefix("127.") || address == "::1" || address.hasPrefix("::ffff:127.")
    }
}

extension HTTPField.Name {
    static let xForwardedFor = Self("X-Forwarded-For")!
}
