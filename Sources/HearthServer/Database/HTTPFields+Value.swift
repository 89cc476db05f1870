import HTTPTypes

extension HTTPFields {
    /// `self[name]`: the value of the field called `name`, or the values of all of them joined
    /// as that subscript joins them. For headers read on every request: the subscript joins even
    /// a single value through generic lazy sequences, which costs thousands of instructions.
    func value(of name: HTTPField.Name) -> String? {
        var found: String?
        for field in self where field.name == name {
            guard found == nil else { return self[name] }
            found = field.value
        }
        return found
    }
}
