import RunLoopKitPlatform

/// A growable buffer of plain values that one ``TimerQueue`` owns alone: its records, index
/// arrays and heaps. Unlike an `Array` it is a reference with no copy-on-write, so the
/// queue's hot paths (a sift per fire) make no uniqueness checks; indices come from the
/// queue's own bookkeeping and are checked only in debug builds.
///
/// A heap's store places its elements so that element 1 starts a cache line: with 16-byte
/// entries, the four children of every node (`4i + 1 ... 4i + 4`) then share one 64-byte
/// line, as libev arranges its 4-heap, and a sift reads one line per level, not two.
///
/// Not shareable: a queue lives in one ``ModeState`` and is touched on its loop's thread only.
final class TimerStore<Element: BitwiseCopyable> {
    /// The elements, `count` of them; valid until the next ``append(_:)``.
    private(set) var base: UnsafeMutablePointer<Element>
    private(set) var count = 0
    private var capacity: Int
    /// The allocation (64-byte aligned) and where element 0 sits in it.
    private var raw: UnsafeMutableRawPointer
    private let leading: Int

    /// A store whose element 1 starts a cache line when `childrenInOneLine` (for heaps of
    /// 16-byte entries); otherwise packed from the start.
    init(childrenInOneLine: Bool = false) {
        leading = childrenInOneLine ? 64 - MemoryLayout<Element>.stride : 0
        capacity = 8
        (raw, base) = Self.allocate(capacity, leading: leading)
    }

    deinit { raw.deallocate() }

    private static func allocate(
        _ capacity: Int, leading: Int
    ) -> (UnsafeMutableRawPointer, UnsafeMutablePointer<Element>) {
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: leading + capacity * MemoryLayout<Element>.stride,
            alignment: max(64, MemoryLayout<Element>.alignment))
        return (raw, (raw + leading).bindMemory(to: Element.self, capacity: capacity))
    }

    var isEmpty: Bool { count == 0 }

    var first: Element? { count > 0 ? base[0] : nil }

    var indices: Range<Int> { 0..<count }

    subscript(index: Int) -> Element {
        get {
            check(index)
            return base[index]
        }
        set {
            check(index)
            base[index] = newValue
        }
    }

    /// The bounds check of debug builds (release builds trust the queue's bookkeeping).
    @inline(__always)
    private func check(_ index: Int) {
        #if DEBUG
        require(index >= 0 && index < count, "TimerStore: index \(index) out of 0..<\(count)")
        #endif
    }

    func append(_ element: Element) {
        if count == capacity { grow() }
        base[count] = element
        count &+= 1
    }

    @discardableResult
    func removeLast() -> Element {
        require(count > 0, "TimerStore: removeLast() on an empty store")
        count &-= 1
        return base[count]
    }

    func popLast() -> Element? { count > 0 ? removeLast() : nil }

    /// Drops the last `k` elements.
    func removeLast(_ k: Int) {
        require(k >= 0 && k <= count, "TimerStore: removeLast(\(k)) with \(count) elements")
        count &-= k
    }

    func removeAll() { count = 0 }

    /// Doubles the capacity (as `Array` does), moving the elements.
    private func grow() {
        let (larger, largerBase) = Self.allocate(capacity * 2, leading: leading)
        largerBase.moveInitialize(from: base, count: count)
        raw.deallocate()
        (raw, base) = (larger, largerBase)
        capacity *= 2
    }
}
