import RunLoopKitPlatform

/// This module's `Mutex`: the platform layer's, whose word holds no thread id, so that a
/// forked child's threads can take every lock of the module (`RunLoopKitPlatform/FutexMutex.swift`
/// says why; under `make sanitizers`' ThreadSanitizer run, the platform's pthread one). A
/// declaration of the module's own (as in RunLoopKit) shadows `Synchronization.Mutex`.
typealias Mutex<Value: ~Copyable> = RunLoopKitPlatform.Mutex<Value>
