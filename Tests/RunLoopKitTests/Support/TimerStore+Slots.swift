@testable import RunLoopKit

extension TimerStore where Element == Int32 {
    /// A slot for a new entry of the heap and order tests, as ``TimerQueue`` hands them out:
    /// one of `free` if any, otherwise a new one, its position -1 ("none").
    func newSlot(reusing free: inout [Int32]) -> Int32 {
        if let reused = free.popLast() { return reused }
        append(-1)
        return Int32(count - 1)
    }
}
