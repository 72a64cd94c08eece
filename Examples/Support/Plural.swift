/// `count` followed by the noun in the number it takes: "1 task", "2 tasks", "0 tasks".
///
/// - Parameters:
///   - count: how many.
///   - singular: the noun for one.
///   - plural: the noun for any other count (default: `singular` + "s").
/// - Returns: the count and the noun, separated by a space.
public func counted(_ count: Int, _ singular: String, plural: String? = nil) -> String {
    "\(count) " + (count == 1 ? singular : plural ?? singular + "s")
}
