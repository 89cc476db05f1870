/// An expression of the storage rules language, with where it starts in the file (for errors).
public indirect enum StorageExpression: Sendable {
    case literal(StorageValue)
    case variable(String, SourcePosition)
    case list([StorageExpression])
    case map([(key: String, value: StorageExpression)])
    case member(StorageExpression, String, SourcePosition)
    case index(StorageExpression, StorageExpression, SourcePosition)
    case slice(StorageExpression, StorageExpression?, StorageExpression?, SourcePosition)
    /// A call of a function by name: `isOwner(uid)`, or a namespaced one such as `math.abs(x)`.
    case call([String], [StorageExpression], SourcePosition)
    /// A method call on a value: `name.matches('image/.*')`.
    case method(StorageExpression, String, [StorageExpression], SourcePosition)
    case unary(String, StorageExpression, SourcePosition)
    case binary(String, StorageExpression, StorageExpression, SourcePosition)
    /// `value is type`.
    case isType(StorageExpression, String, SourcePosition)
    case conditional(StorageExpression, StorageExpression, StorageExpression, SourcePosition)
}
