#if RUNLOOPKIT_TSAN_PTHREAD_MUTEX
import RunLoopKitPlatform

/// Under `make sanitizers`' ThreadSanitizer run, this module's `Mutex` is the platform
/// layer's pthread one (`RunLoopKitPlatform/ThreadSanitizerMutex.swift` says why), as in
/// RunLoopKit: a declaration of the module's own shadows `Synchronization.Mutex`.
typealias Mutex<Value: ~Copyable> = RunLoopKitPlatform.Mutex<Value>
#endif
