/// The consumer's own module named ExampleSupport.
public enum ExampleSupportName {
    /// This module's name.
    public static let name = "ExampleSupport"
}
