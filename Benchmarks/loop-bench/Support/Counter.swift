/// A counter bumped by callouts on one loop thread.
final class Counter: @unchecked Sendable {
    // Safe: incremented only by callouts of one loop on its own thread; read on that thread
    // or after the thread handed its result back.
    var value = 0
}
