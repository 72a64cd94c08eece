#if !SwiftSystem
import RunLoopKit

// Without RunLoopKit's package trait "SwiftSystem", RunLoopKitSystem has none of its forms:
// the trait brings in apple/swift-system, which no package using only the other products
// should resolve. A use of one of them then fails to compile with this message (the
// descriptor, path and errno parameters are generic here, since swift-system's types are not
// there to name): each matches the call that the trait would serve.

extension EVRunLoop {
    /// Unavailable: `readiness(of:for:inMode:)` on a swift-system `FileDescriptor` needs the
    /// package trait SwiftSystem (the `Int32` form is RunLoopKit's own).
    ///
    /// - Parameters:
    ///   - fileDescriptor: a swift-system `FileDescriptor`.
    ///   - readiness: what to wait for.
    ///   - mode: the mode whose runs serve the sequence.
    /// - Returns: never: the call does not compile.
    @available(*, unavailable, message: "RunLoopKitSystem needs RunLoopKit's package trait \"SwiftSystem\": .package(url: \"…/RunLoopKit.git\", from: \"0.1.0\", traits: [\"SwiftSystem\"])")
    public func readiness<Descriptor: RawRepresentable>(
        of fileDescriptor: Descriptor, for readiness: EVSource.Readiness = .read, inMode mode: Mode = .common
    ) -> SourceEvents where Descriptor.RawValue == CInt {
        misuse("EVRunLoop.readiness(of:for:inMode:): built without the package trait SwiftSystem")
    }

    /// Unavailable: `fileChanges(at:for:tolerance:inMode:)` on a swift-system `FilePath`
    /// needs the package trait SwiftSystem (the `String` form is RunLoopKit's own).
    ///
    /// - Parameters:
    ///   - path: a swift-system `FilePath`.
    ///   - changes: the kinds of change reported.
    ///   - tolerance: how long a change may wait for more.
    ///   - mode: the mode whose runs serve the sequence.
    /// - Returns: never: the call does not compile.
    @available(*, unavailable, message: "RunLoopKitSystem needs RunLoopKit's package trait \"SwiftSystem\": .package(url: \"…/RunLoopKit.git\", from: \"0.1.0\", traits: [\"SwiftSystem\"])")
    public func fileChanges<Path: ExpressibleByStringLiteral & CustomStringConvertible>(
        at path: Path, for changes: EVSource.FileChanges = .all, tolerance: Duration = .zero, inMode mode: Mode = .common
    ) -> SourceEvents {
        misuse("EVRunLoop.fileChanges(at:…): built without the package trait SwiftSystem")
    }

    /// Unavailable: the `FileDescriptor` form of `pollDescriptor` needs the package trait
    /// SwiftSystem.
    @available(*, unavailable, message: "RunLoopKitSystem needs RunLoopKit's package trait \"SwiftSystem\": .package(url: \"…/RunLoopKit.git\", from: \"0.1.0\", traits: [\"SwiftSystem\"])")
    public var systemPollDescriptor: Never {
        misuse("EVRunLoop.systemPollDescriptor: built without the package trait SwiftSystem")
    }
}

extension EVSource {
    /// Unavailable: `init(fileDescriptor:for:closesDescriptor:label:handler:)` on a
    /// swift-system `FileDescriptor` needs the package trait SwiftSystem (the `Int32` form is
    /// RunLoopKit's own).
    ///
    /// - Parameters:
    ///   - fileDescriptor: a swift-system `FileDescriptor`.
    ///   - readiness: what to wait for.
    ///   - closesDescriptor: whether the source owns the descriptor.
    ///   - label: a name for `EVRunLoop.Trace`.
    ///   - handler: the callout.
    @available(*, unavailable, message: "RunLoopKitSystem needs RunLoopKit's package trait \"SwiftSystem\": .package(url: \"…/RunLoopKit.git\", from: \"0.1.0\", traits: [\"SwiftSystem\"])")
    public convenience init<Descriptor: RawRepresentable>(
        fileDescriptor: Descriptor, for readiness: Readiness = .read, closesDescriptor: Bool = false,
        label: String? = nil, handler: @escaping @Sendable (EVSource) -> Void
    ) where Descriptor.RawValue == CInt {
        misuse("EVSource.init(fileDescriptor:…): built without the package trait SwiftSystem")
    }
}

extension EVSource {
    /// Unavailable: `init(watching:for:tolerance:label:handler:)` on a swift-system
    /// `FilePath` needs the package trait SwiftSystem (the `String` form is RunLoopKit's own).
    ///
    /// - Parameters:
    ///   - path: a swift-system `FilePath`.
    ///   - changes: the kinds of change reported.
    ///   - tolerance: how long a change may wait for more.
    ///   - label: a name for `EVRunLoop.Trace`.
    ///   - handler: the callout.
    @available(*, unavailable, message: "RunLoopKitSystem needs RunLoopKit's package trait \"SwiftSystem\": .package(url: \"…/RunLoopKit.git\", from: \"0.1.0\", traits: [\"SwiftSystem\"])")
    public convenience init<Path: ExpressibleByStringLiteral & CustomStringConvertible>(
        watching path: Path, for changes: FileChanges = .all, tolerance: Duration = .zero,
        label: String? = nil, handler: @escaping @Sendable (EVSource) -> Void
    ) throws(EVRunLoop.Error) {
        misuse("EVSource.init(watching:…): built without the package trait SwiftSystem")
    }
}

extension EVSource.Kind {
    /// Unavailable: the `FileDescriptor` form of `fileDescriptor` needs the package trait
    /// SwiftSystem.
    @available(*, unavailable, message: "RunLoopKitSystem needs RunLoopKit's package trait \"SwiftSystem\": .package(url: \"…/RunLoopKit.git\", from: \"0.1.0\", traits: [\"SwiftSystem\"])")
    public var systemFileDescriptor: Never {
        misuse("EVSource.Kind.systemFileDescriptor: built without the package trait SwiftSystem")
    }
}

extension EVRunLoop.Error {
    /// Unavailable: the `Errno` form of `errno` needs the package trait SwiftSystem.
    @available(*, unavailable, message: "RunLoopKitSystem needs RunLoopKit's package trait \"SwiftSystem\": .package(url: \"…/RunLoopKit.git\", from: \"0.1.0\", traits: [\"SwiftSystem\"])")
    public var systemErrno: Never {
        misuse("EVRunLoop.Error.systemErrno: built without the package trait SwiftSystem")
    }

    /// Unavailable: `init(call:errno:)` on a swift-system `Errno` needs the package trait
    /// SwiftSystem (the `Int32` form is RunLoopKit's own).
    ///
    /// - Parameters:
    ///   - call: the call that failed.
    ///   - errno: a swift-system `Errno`.
    @available(*, unavailable, message: "RunLoopKitSystem needs RunLoopKit's package trait \"SwiftSystem\": .package(url: \"…/RunLoopKit.git\", from: \"0.1.0\", traits: [\"SwiftSystem\"])")
    public init<Number: RawRepresentable>(call: String, errno: Number) where Number.RawValue == CInt {
        misuse("EVRunLoop.Error.init(call:errno:): built without the package trait SwiftSystem")
    }
}
#endif
