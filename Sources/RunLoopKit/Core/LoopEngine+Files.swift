import Glibc
import RunLoopKitPlatform

/// File sources on the loop's thread: their share of the loop's inotify instance
/// (``InotifyInstance``), watched by the backend while the armed mode holds a file source,
/// and the sources its events make ready.
///
/// A file source is in the instance's table from its add (on the adding thread) while it is
/// in one of the loop's modes: its changes are collected then, whichever mode runs, and it
/// fires when one of its modes runs. It leaves the table when it leaves its last mode or is
/// invalidated.
extension LoopEngine {
    /// Watches `source`'s directory in the loop's inotify instance unless it is watched
    /// already (or its watch ended). Returns the error when inotify refuses.
    func registerFileSource(_ source: EVSource, _ watch: FileWatch) -> Error? {
        guard !watch.ended else { return nil }
        adoptInotifyIfForked()
        return inotify.register(source, watch)
    }

    /// Lets go of `source`'s watch (it left its last mode, or was invalidated).
    func unregisterFileSource(_ source: EVSource, _ watch: FileWatch) {
        adoptInotifyIfForked()
        inotify.unregister(source, watch)
    }

    /// Counts `source` among those the instance is watched for; the first starts the
    /// backend's watch of its descriptor (`state`: the mode about to run or running).
    func armFileSource(_ source: EVSource, _ watch: FileWatch, in state: ModeState) {
        guard !watch.isArmed, inotify.isRegistered(source) else { return }
        watch.isArmed = true
        inotifyArmedSources += 1
        guard inotifyToken < 0 else { return }
        watchInotify(in: state)
    }

    /// Starts the backend's watch of the instance's descriptor.
    private func watchInotify(in state: ModeState) {
        let fd = inotify.descriptor
        countWatch(of: fd, in: state)
        inotifyToken = watches.claim(nil)
        inotifyWatched = fd
        backend.watch(.descriptor(fd, interest: .read), token: inotifyToken)
    }

    /// Uncounts `watch`'s source; the last stops the backend's watch of the instance.
    func disarmFileSource(_ watch: FileWatch) {
        guard watch.isArmed else { return }
        watch.isArmed = false
        inotifyArmedSources -= 1
        if inotifyArmedSources == 0 { unwatchInotify() }
    }

    /// Stops the backend's watch of the instance's descriptor, if it has one.
    private func unwatchInotify() {
        guard inotifyToken >= 0 else { return }
        backend.unwatch(inotifyToken)
        watches.release(inotifyToken)
        inotifyToken = -1
        watchesPerDescriptor[Int(inotifyWatched)] -= 1
    }

    /// The backend reported the instance readable: its events are read now, and each source
    /// that recorded a change it waits for is ready (it fires when a mode holding it runs).
    func drainInotify() {
        adoptInotifyIfForked()
        inotify.drain { source in markReady(source) }
    }

    /// In a forked child, before the loop's first wait there (the backend's adoption calls
    /// it: a run that forked goes on waiting) or its first use of the instance: the instance is
    /// made anew (``InotifyInstance/adoptIfForked()``), the backend watches the new
    /// descriptor instead of the parent's (unwatched and watched again even if the number
    /// is the same, so that the backend registers the new file), and the sources whose
    /// directory could not be watched again end: reporting it deleted when it is gone, and
    /// with the error when inotify refused (a limit).
    func adoptInotifyIfForked() {
        guard ProcessForks.generation != inotifyGeneration else { return }
        let (generation, lost) = inotify.adoptIfForked()
        for (source, code) in lost {
            guard let watch = source.fileWatch else { continue }
            if code == ENOENT || code == ENOTDIR {  // the directory is gone
                watch.recordLost()
                markReady(source)
            } else if let state = source.modes.first {  // refused (a limit): the error, not a deletion
                fail(source, with: InotifyInstance.refusal(of: watch, errno: code), in: state)
            }
        }
        guard generation != inotifyGeneration else { return }
        inotifyGeneration = generation
        guard inotifyToken >= 0, let state = armedState else { return }
        unwatchInotify()
        watchInotify(in: state)
    }

    /// The loop ends: the instance closes, and its watches go with it.
    func closeInotify() {
        unwatchInotify()
        inotify.close()
    }
}
