import Foundation
import HearthEngine
import Hummingbird
import HummingbirdCore

extension RequestLog {
    /// Keeps an HTTP request; credentials in its query are hidden here.
    public func record(
        time: Date, method: String, uri: URI, status: Int?, duration: Duration?, transport: String,
        requestID: String? = nil, uid: String? = nil
    ) {
        guard isEnabled else { return }
        record(path: HearthResponder.loggablePath(uri), time: time, method: method, status: status, duration: duration,
               transport: transport, requestID: requestID, uid: uid)
    }
}
