import HearthCore

extension HearthError {
    /// `Permission denied`: the security rules refused the operation (401 on REST,
    /// `permission_denied` on the realtime protocol).
    public static let permissionDeniedByRules = HearthError(.permissionDenied, "Permission denied")
}
