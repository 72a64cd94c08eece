extension EVRunLoop {
    /// One element of ``readiness(of:for:inMode:)``, ``signals(_:inMode:)`` and
    /// ``fileChanges(at:for:tolerance:inMode:)``: the callouts of the sequence's source
    /// since the previous element.
    public struct SourceEvent: Sendable, Hashable {
        /// How many callouts this element stands for: more than one when they came faster
        /// than the consumer read them (the latest-value rule folds them into one element).
        public var count: Int
        /// A file sequence's changes since the previous element; empty for other kinds. With
        /// ``EVSource/FileChanges/overflow``, changes were lost: look again at the file or
        /// directory.
        public var fileChanges: EVSource.FileChanges
        /// A directory's entries that changed since the previous element, in the order they
        /// first changed; empty for other kinds.
        public var changedNames: [String]

        /// Creates an element.
        ///
        /// - Parameters:
        ///   - count: the callouts it stands for.
        ///   - fileChanges: a file source's changes.
        ///   - changedNames: a directory source's changed entries.
        public init(count: Int, fileChanges: EVSource.FileChanges = [], changedNames: [String] = []) {
            self.count = count
            self.fileChanges = fileChanges
            self.changedNames = changedNames
        }

        /// `self` folded into the unread `older`.
        func merged(after older: SourceEvent) -> SourceEvent {
            SourceEvent(count: older.count + count, fileChanges: older.fileChanges.union(fileChanges),
                        changedNames: older.changedNames + changedNames.filter { !older.changedNames.contains($0) })
        }
    }

    /// An async sequence of a source's callouts on a loop: the readiness of a descriptor,
    /// the arrivals of a signal, the changes of a file.
    ///
    /// - Each iteration (each `makeAsyncIterator()`) makes its own ``EVSource`` and adds it to
    ///   the loop in the sequence's mode; the source is invalidated when the consuming task
    ///   is cancelled or the iterator goes away. The loop must be running for elements to come.
    /// - No unbounded buffering: a callout that comes while the consumer has not read the
    ///   previous element is folded into it (``SourceEvent/count`` counts them). A descriptor's
    ///   readiness is level-triggered, so the loop stops watching it after each element and
    ///   watches it again when the consumer asks for the next one: read the descriptor in
    ///   between, or the next element comes at once. The source stays in its mode meanwhile.
    /// - The sequence ends (nil) when its source ends: a watched directory that went away
    ///   (after the element reporting it). It throws the source's ``EVSource/error`` when its
    ///   descriptor was found closed, or the error of making the source.
    ///
    /// There is no CFRunLoop counterpart; it is a dispatch source's event handler as an
    /// `AsyncSequence`, as swift-async-algorithms shapes them.
    public struct SourceEvents: AsyncSequence, Sendable {
        public typealias Element = SourceEvent
        public typealias Failure = EVRunLoop.Error

        let loop: EVRunLoop
        let mode: Mode
        /// Whether the source leaves the mode after each element (level-triggered readiness).
        let pausesAfterEach: Bool
        /// Makes the source whose handler is given.
        let makeSource: @Sendable (_ handler: @escaping @Sendable (EVSource) -> Void) throws(EVRunLoop.Error) -> EVSource

        /// Makes and adds this iteration's source.
        ///
        /// - Returns: an iterator whose source lives until the iterator goes away or its
        ///   task is cancelled.
        public func makeAsyncIterator() -> Iterator {
            let channel = LatestValueChannel<SourceEvent, EVRunLoop.Error> { older, newer in newer.merged(after: older) }
            let (loop, mode, pausesAfterEach) = (self.loop, self.mode, self.pausesAfterEach)
            do {
                let source = try makeSource { source in
                    if let error = source.error {
                        channel.finish(throwing: error)
                        return
                    }
                    channel.send(SourceEvent(count: 1, fileChanges: source.fileChanges, changedNames: source.changedNames))
                    if source.fileWatch?.ended == true { channel.finish() }
                    if pausesAfterEach { loop.engine.pause(source) }
                }
                loop.add(source, forMode: mode)
                return Iterator(subscription: Subscription(channel: channel, source: source, loop: loop),
                                pausesAfterEach: pausesAfterEach)
            } catch {
                channel.finish(throwing: error)
                return Iterator(subscription: Subscription(channel: channel, source: nil, loop: loop),
                                pausesAfterEach: false)
            }
        }

        /// Reads a source's events; dropping it invalidates the source.
        public struct Iterator: AsyncIteratorProtocol {
            let subscription: Subscription
            let pausesAfterEach: Bool
            var delivered = false

            /// The next element, waiting for it; nil once the source ended or the consuming
            /// task is cancelled.
            ///
            /// - Returns: the callouts since the previous element, or nil at the end.
            /// - Throws: the source's error (a descriptor found closed), or the error of
            ///   making it.
            public mutating func next() async throws(EVRunLoop.Error) -> SourceEvent? {
                if delivered && pausesAfterEach { subscription.resume() }
                let element = try await subscription.channel.next()
                delivered = element != nil
                return element
            }
        }

        /// One iteration's channel and source; the source ends with it.
        final class Subscription: Sendable {
            let channel: LatestValueChannel<SourceEvent, EVRunLoop.Error>
            let source: EVSource?
            let loop: EVRunLoop

            init(channel: LatestValueChannel<SourceEvent, EVRunLoop.Error>, source: EVSource?, loop: EVRunLoop) {
                self.channel = channel
                self.source = source
                self.loop = loop
            }

            /// Watches the paused source's descriptor again (a no-op once it was invalidated).
            func resume() {
                guard let source else { return }
                if loop.isOwnerThread {
                    loop.engine.unpause(source)
                } else {
                    loop.enqueue { $0.unpause(source) }
                }
            }

            deinit {
                channel.cancel()
                source?.invalidate()
            }
        }
    }

    /// The readiness of `fileDescriptor` as an async sequence: an element each time it is
    /// ready for `readiness`, once the consumer asked for it (read or write in between).
    ///
    /// - Parameters:
    ///   - fileDescriptor: an open descriptor; the sequence never closes it.
    ///   - readiness: what to wait for (default `.read`).
    ///   - mode: the mode whose runs serve the sequence (default the common modes).
    /// - Returns: the sequence; each `for try await` over it has its own source.
    ///
    /// See ``EVSource/init(fileDescriptor:for:closesDescriptor:label:handler:)``.
    public func readiness(of fileDescriptor: Int32, for readiness: EVSource.Readiness = .read,
                          inMode mode: Mode = .common) -> SourceEvents {
        SourceEvents(loop: self, mode: mode, pausesAfterEach: true) { handler throws(EVRunLoop.Error) in
            try EVSource(fileDescriptor: fileDescriptor, for: readiness, label: "readiness", handler: handler)
        }
    }

    /// The arrivals of the POSIX signal `number` as an async sequence (arrivals faster than
    /// the consumer reads fold into one element, counted).
    ///
    /// - Parameters:
    ///   - number: the signal, such as `SIGTERM`.
    ///   - mode: the mode whose runs serve the sequence (default the common modes).
    /// - Returns: the sequence; each `for try await` over it has its own source.
    ///
    /// See ``EVSource/init(signal:label:handler:)``.
    public func signals(_ number: Int32, inMode mode: Mode = .common) -> SourceEvents {
        SourceEvents(loop: self, mode: mode, pausesAfterEach: false) { handler in
            EVSource(signal: number, label: "signals", handler: handler)
        }
    }

    /// The changes of the file or directory at `path` as an async sequence; it ends after
    /// the element reporting that a watched directory went away.
    ///
    /// - Parameters:
    ///   - path: an absolute path to an existing file or directory.
    ///   - changes: the kinds of change reported.
    ///   - tolerance: how long a change may wait for more (see
    ///     ``EVSource/init(watching:for:tolerance:label:handler:)``).
    ///   - mode: the mode whose runs serve the sequence (default the common modes).
    /// - Returns: the sequence; each `for try await` over it has its own source (its first
    ///   `next()` throws when the path cannot be watched).
    public func fileChanges(at path: String, for changes: EVSource.FileChanges = .all, tolerance: Duration = .zero,
                            inMode mode: Mode = .common) -> SourceEvents {
        SourceEvents(loop: self, mode: mode, pausesAfterEach: false) { handler throws(EVRunLoop.Error) in
            try EVSource(watching: path, for: changes, tolerance: tolerance, label: "fileChanges", handler: handler)
        }
    }
}
