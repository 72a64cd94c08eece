#if SwiftSystem
// Built under the package trait SwiftSystem, which brings swift-system.
public import RunLoopKit
public import SystemPackage

/// Descriptor sources on swift-system's `FileDescriptor`, the type swift-subprocess and Swift
/// server code pass around.
extension EVSource {
    /// Creates a source that fires when `fileDescriptor` is ready to read or write: the
    /// `FileDescriptor` form of `EVSource.init(fileDescriptor:for:closesDescriptor:label:handler:)`.
    ///
    /// Invalidate the source before closing the descriptor, or pass `closesDescriptor: true`
    /// to let the source own it: `EVSource.invalidate()` (or the source's
    /// release) then closes it, after the loop stopped watching it.
    ///
    /// - Parameters:
    ///   - fileDescriptor: an open descriptor.
    ///   - readiness: what to wait for: `.read`, `.write` or `[.read, .write]`.
    ///   - closesDescriptor: whether the source owns the descriptor and closes it.
    ///   - label: a name for `EVRunLoop.Trace`.
    ///   - handler: the callout, given the source.
    /// - Throws: `EVRunLoop.Error` naming `fstat` when the descriptor is not open (its
    ///   `EVRunLoop.Error.systemErrno` is then `.badFileDescriptor`).
    ///
    /// The corresponding CF type is `CFFileDescriptor` (watched with libev's `ev_io`).
    public convenience init(
        fileDescriptor: FileDescriptor, for readiness: Readiness = .read, closesDescriptor: Bool = false,
        label: String? = nil, handler: @escaping @Sendable (EVSource) -> Void
    ) throws(EVRunLoop.Error) {
        try self.init(fileDescriptor: fileDescriptor.rawValue, for: readiness, closesDescriptor: closesDescriptor,
                      label: label, handler: handler)
    }
}

extension EVSource.Kind {
    /// A source watching `fd` for readiness: the `FileDescriptor` form of
    /// `EVSource.Kind.fileDescriptor(_:)`.
    ///
    /// - Parameter fd: the descriptor.
    /// - Returns: the kind.
    ///
    /// The corresponding CF type is `CFFileDescriptor`.
    public static func fileDescriptor(_ fd: FileDescriptor) -> Self { .fileDescriptor(fd.rawValue) }

    /// The descriptor a descriptor source watches, as swift-system's `FileDescriptor`; nil
    /// for the other kinds. The `FileDescriptor` form of
    /// `EVSource.Kind.fileDescriptor`.
    ///
    /// The corresponding CF function is `CFFileDescriptorGetNativeDescriptor`.
    public var systemFileDescriptor: FileDescriptor? { fileDescriptor.map(FileDescriptor.init(rawValue:)) }
}
#endif
