/// The consumer's own module named TestSupport.
public enum TestSupportName {
    /// This module's name.
    public static let name = "TestSupport"
}
