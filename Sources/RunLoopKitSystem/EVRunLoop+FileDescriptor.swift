#if SwiftSystem
// Built under the package trait SwiftSystem, which brings swift-system.
public import RunLoopKit
public import SystemPackage

/// A loop's descriptors as swift-system's `FileDescriptor`.
extension EVRunLoop {
    /// The readiness of `fileDescriptor` as an async sequence: an element each time it is
    /// ready for `readiness`, once the consumer asked for it. The `FileDescriptor` form of
    /// `EVRunLoop.readiness(of:for:inMode:)`.
    ///
    /// - Parameters:
    ///   - fileDescriptor: an open descriptor; the sequence never closes it.
    ///   - readiness: what to wait for (default `.read`).
    ///   - mode: the mode whose runs serve the sequence (default the common modes).
    /// - Returns: the sequence; each `for try await` over it has its own source.
    ///
    /// The corresponding CF type is `CFFileDescriptor`; libev's watcher is `ev_io`.
    public func readiness(of fileDescriptor: FileDescriptor, for readiness: EVSource.Readiness = .read,
                          inMode mode: Mode = .common) -> SourceEvents {
        self.readiness(of: fileDescriptor.rawValue, for: readiness, inMode: mode)
    }

    /// The descriptor another loop polls to drive this one, as swift-system's
    /// `FileDescriptor`: the `FileDescriptor` form of `EVRunLoop.pollDescriptor`
    /// (poll it for reading; never read, close or change it). A loop on a virtual clock has
    /// none: asking stops the program with a message.
    ///
    /// The corresponding sd-event call is `sd_event_get_fd`; libuv's is `uv_backend_fd`.
    public var systemPollDescriptor: FileDescriptor { FileDescriptor(rawValue: pollDescriptor) }

    /// The changes to the file or directory at `path` as an async sequence: the `FilePath`
    /// form of `EVRunLoop.fileChanges(at:for:tolerance:inMode:)`.
    ///
    /// - Parameters:
    ///   - path: the file or directory to watch.
    ///   - changes: the kinds of change reported.
    ///   - tolerance: how long a change may wait for more.
    ///   - mode: the mode whose runs serve the sequence (default the common modes).
    /// - Returns: the sequence; each `for try await` over it has its own source.
    ///
    /// The corresponding GLib type is `GFileMonitor`; libev's watcher is `ev_stat`.
    public func fileChanges(at path: FilePath, for changes: EVSource.FileChanges = .all, tolerance: Duration = .zero,
                            inMode mode: Mode = .common) -> SourceEvents {
        fileChanges(at: path.string, for: changes, tolerance: tolerance, inMode: mode)
    }
}

extension EVSource {
    /// Creates a source that fires when the file or directory at `path` changes: the
    /// `FilePath` form of `EVSource.init(watching:for:tolerance:label:handler:)`.
    ///
    /// - Parameters:
    ///   - path: the file or directory to watch.
    ///   - changes: the kinds of change reported.
    ///   - tolerance: how long a change may wait for more before the callout.
    ///   - label: a name for `EVRunLoop.Trace`.
    ///   - handler: the callout, given the source.
    /// - Throws: `EVRunLoop.Error` when the path cannot be watched.
    ///
    /// The corresponding GLib type is `GFileMonitor`; libev's watcher is `ev_stat`.
    public convenience init(
        watching path: FilePath, for changes: FileChanges = .all, tolerance: Duration = .zero,
        label: String? = nil, handler: @escaping @Sendable (EVSource) -> Void
    ) throws(EVRunLoop.Error) {
        try self.init(watching: path.string, for: changes, tolerance: tolerance, label: label, handler: handler)
    }
}
#endif
