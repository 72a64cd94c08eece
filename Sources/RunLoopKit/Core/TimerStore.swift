/// A growable buffer of plain values that one ``TimerQueue`` owns alone: its records, index
/// arrays and heaps. Unlike an `Array` it is a reference with no copy-on-write, so the
/// queue's hot paths (a sift per fire) make no uniqueness checks; indices come from the
/// queue's own bookkeeping and are checked only in debug builds.
///
/// Not shareable: a queue lives in one ``ModeState`` and is touched on its loop's thread only.
final class TimerStore<Element: BitwiseCopyable> {
    /// The elements, `count` of them; valid until the next ``append(_:)``.
    private(set) var base: UnsafeMutablePointer<Element>
    private(set) var count = 0
    private var capacity: Int

    init() {
        capacity = 8
        base = .allocate(capacity: capacity)
    }

    deinit { base.deallocate() }

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

    func removeAll() { count = 0 }

    /// Doubles the capacity (as `Array` does), moving the elements.
    private func grow() {
        let larger = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
        larger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = larger
        capacity *= 2
    }
}
