/// A code as the emulator lists it (`/emulator/v1/projects/<id>/oobCodes`).
public struct ListedActionCode: Sendable, Equatable {
    public var code: ActionCode
    public var oobCode: String
    public var link: String

    public init(code: ActionCode, oobCode: String, link: String) {
        self.code = code
        self.oobCode = oobCode
        self.link = link
    }
}
