import Glibc
import RunLoopKit

/// GLib's descriptors as descriptor sources of the hosting loop: after each query, one
/// ``EVSource`` per descriptor GLib waits on, in the hosted modes, so that the loop's wait
/// ends when one is ready. The sources only wake the loop; GLib reads the readiness itself
/// in its check. Loop thread only.
///
/// A source is kept from query to query while its descriptor still names the same file
/// (device and inode): a descriptor closed and its number reused between two queries gets a
/// new source, since the kernel's watch of the old file would never report the new one.
final class GLibWatches {
    private struct Watch {
        let source: EVSource
        let device: UInt
        let inode: UInt
    }

    private let modes: [EVRunLoop.Mode]
    private let label: String
    private var watches: [Int32: Watch] = [:]
    /// The last query's descriptors and what is waited for; reused from query to query.
    private var wanted: [Int32: EVSource.Readiness] = [:]

    init(modes: [EVRunLoop.Mode], label: String) {
        self.modes = modes
        self.label = label
    }

    /// Watches exactly the descriptors of `context`'s last query. Returns false when one of
    /// them cannot be watched (it is closed): GLib's poll reports that at once
    /// (`G_IO_NVAL`), so the caller must not sleep.
    func update(from context: GLibContext, on loop: EVRunLoop) -> Bool {
        wanted.removeAll(keepingCapacity: true)
        for index in 0..<context.count {
            let (fd, events) = context.descriptor(at: index)
            guard fd >= 0 else { continue }  // GLib skips negative descriptors too
            var readiness: EVSource.Readiness = []
            if events & Int16(POLLIN | POLLPRI) != 0 { readiness.insert(.read) }
            if events & Int16(POLLOUT) != 0 { readiness.insert(.write) }
            guard !readiness.isEmpty else { continue }
            wanted[fd, default: []].formUnion(readiness)
        }
        var allWatched = true
        var watched = 0
        for (fd, readiness) in wanted {
            if let watch = watches[fd] {
                if watch.source.isValid, let now = Self.identity(of: fd), now == (watch.device, watch.inode) {
                    if watch.source.readiness != readiness { watch.source.readiness = readiness }
                    watched += 1
                    continue
                }
                watch.source.invalidate()
                watches[fd] = nil
            }
            guard let identity = Self.identity(of: fd),
                  let source = try? EVSource(fileDescriptor: fd, for: readiness, label: "\(label) fd \(fd)", handler: { _ in })
            else {
                allWatched = false
                continue
            }
            watches[fd] = Watch(source: source, device: identity.device, inode: identity.inode)
            for mode in modes { loop.add(source, forMode: mode) }
            watched += 1
        }
        if watches.count > watched {
            for (fd, watch) in watches where wanted[fd] == nil {
                watch.source.invalidate()
                watches[fd] = nil
            }
        }
        return allWatched
    }

    /// Stops every watch.
    func removeAll() {
        for watch in watches.values { watch.source.invalidate() }
        watches.removeAll()
    }

    /// The device and inode `fd` names; nil when it is not open.
    private static func identity(of fd: Int32) -> (device: UInt, inode: UInt)? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return (UInt(info.st_dev), UInt(info.st_ino))
    }
}
