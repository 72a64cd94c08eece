import Glibc
import RunLoopKitPlatform

extension EVSource {
    /// What only a source of one kind keeps (``EVSource/state``): a manual, idle or signal
    /// source keeps nothing here, a descriptor source its file's identity and ownership, a
    /// file source its watch, a child source its pidfd and how the child ended. The state
    /// other threads touch is ``EVSource/atomicState``'s, also read by kind.
    ///
    /// CF keeps a version-0 source's state in `CFRunLoopSource` and a descriptor's in
    /// `CFFileDescriptor`; libev gives each kind its own watcher struct (`ev_io`,
    /// `ev_signal`, `ev_child`, `ev_stat`), as this does within one class.
    enum KindState {
        /// A manual, idle or signal source: its kind says all.
        case plain
        /// A descriptor source.
        case descriptor(Descriptor)
        /// A file source: its watch and what it collected.
        case file(FileWatch)
        /// A child source.
        case child(Child)
    }

    /// A descriptor source's own state.
    struct Descriptor {
        /// The descriptor.
        let fd: Int32
        /// The file it was made for (device and inode), to notice that its number now names
        /// another file until its loop registers it.
        let identity: (device: UInt, inode: UInt)
        /// Whether ``EVSource/invalidate()`` closes the descriptor.
        let closesDescriptor: Bool
        /// The file as the loop's ``DescriptorRegistry`` knows it, from the add on: checked
        /// in place of the device and inode. Loop thread only.
        var registryEntry = DescriptorRegistry.Entry.unregistered
    }

    /// A child source's own state.
    struct Child {
        /// The child's process id.
        let pid: pid_t
        /// Its pidfd, watched for readability (the child exited), which the source owns;
        /// -1 when the source watches `SIGCHLD` instead.
        let pidfd: Int32
        /// How the child ended, once reaped (``EVSource/childExit``). Loop thread only.
        var exit: ChildExit?
    }
}
