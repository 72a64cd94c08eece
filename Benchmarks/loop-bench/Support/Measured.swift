import RunLoopKit

// What callgrind counts of RunLoopKit's side (`--toggle-collect='*measuredFire*'`, …) is out
// of line under names holding `measured`. An uncounted round calls the inlined loops below:
// the compiler would merge a twin function with the measured one.

/// Runs `loop` for `seconds`: the fire workload's window.
@inline(never)
func measuredFire(_ loop: EVRunLoop, seconds: Double) {
    loop.run(mode: .default, for: .seconds(seconds))
}

/// ``addTimers(_:_:into:)``, counted.
@inline(never)
func measuredAdd(_ loop: EVRunLoop, _ after: [Double], into timers: UnsafeMutablePointer<EVTimer>) {
    addTimers(loop, after, into: timers)
}

/// ``invalidateTimers(_:order:)``, counted.
@inline(never)
func measuredInvalidate(_ timers: UnsafeMutablePointer<EVTimer>, order: [Int32]) {
    invalidateTimers(timers, order: order)
}

/// Creates and adds a one-shot timer `after[i]` seconds away into `timers[i]` (uninitialized
/// room), as libev's side writes its `ev_timer`s: no array append in the count.
@inline(__always)
func addTimers(_ loop: EVRunLoop, _ after: [Double], into timers: UnsafeMutablePointer<EVTimer>) {
    for index in after.indices {
        let timer = EVTimer(interval: after[index], repeats: false) { _ in }
        loop.add(timer, forMode: .default)
        (timers + index).initialize(to: timer)
    }
}

/// Invalidates `timers` in the order `order`.
@inline(__always)
func invalidateTimers(_ timers: UnsafeMutablePointer<EVTimer>, order: [Int32]) {
    for index in order { timers[Int(index)].invalidate() }
}

/// Runs `loop` until its idle source stops it: the idle workload's run.
@inline(never)
func measuredIdle(_ loop: EVRunLoop) {
    loop.run(mode: .default, for: .seconds(3600))
}

/// Runs `loop` until stopped: the loop thread of the job workload's bursts, counted with
/// the sender's side below (`*measuredJobs*`: on different threads, neither nests).
@inline(never)
func measuredJobsLoop(_ loop: EVRunLoop) {
    loop.run()
}

/// Calls `send` with `job` `count` times: the sender of the job workload's closure bursts.
@inline(never)
func measuredJobsSend(_ count: Int, _ job: @escaping @Sendable () -> Void, _ send: (@escaping @Sendable () -> Void) -> Void) {
    for _ in 0..<count { send(job) }
}
