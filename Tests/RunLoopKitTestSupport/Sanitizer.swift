import Glibc

/// The sanitizer that instruments this process, if any (`make sanitizers` runs the suite under
/// each), told by its runtime's entry symbol being in the process.
public enum Sanitizer {
    /// Whether ThreadSanitizer's runtime is in this process (a `-sanitize=thread` build).
    public static var threadIsActive: Bool { dlsym(nil, "__tsan_init") != nil }
}
