// Public: ``identity(of:)``'s `@inlinable` body calls `fstat` (declared, with `stat`, by the shim's
// header, which includes libev's), and compiles into the caller.
public import CRunLoopKitLibev
import Glibc

/// File descriptors, the platform's part: closing one, duplicating one onto a number, the
/// file a descriptor or a path names (`fstat`, `stat`), and reading a small file whole.
///
/// The corresponding swift-system type is `FileDescriptor` (`close`, `duplicate(as:)`).
// `@usableFromInline`: without it, no `@inlinable` body of this package type's members reaches
// the module above (ARCHITECTURE.md, "Layers").
@usableFromInline package enum Descriptors {
    /// Closes `fd`; its errors are not reported (Linux closes it whatever `close` returns).
    package static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// Makes `target` name what `fd` names (`dup3` with `O_CLOEXEC`, unless they are the
    /// same number); false, with ``SystemErrno/current`` set, when it fails.
    package static func duplicate(_ fd: Int32, onto target: Int32) -> Bool { clibev_dup_onto(fd, target) >= 0 }

    /// The device and inode `fd` names, or nil (``SystemErrno/current`` set) if it is not open.
    @inlinable
    package static func identity(of fd: Int32) -> (device: UInt, inode: UInt)? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        return (UInt(info.st_dev), UInt(info.st_ino))
    }

    /// Whether `path` names a directory (following symbolic links); throws the `stat`
    /// error, named `"<call>: stat"`, when it names nothing.
    package static func isDirectory(_ path: String, call: String) throws(SystemCallError) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { throw SystemCallError(call: "\(call): stat", errno: errno) }
        return (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The first bytes (at most `limit`) of the file at `path`, read with one `read`; nil
    /// when it cannot be opened or read, or is empty.
    package static func readSmallFile(_ path: String, limit: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var bytes = [UInt8](repeating: 0, count: limit)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return Array(bytes[..<count])
    }
}
