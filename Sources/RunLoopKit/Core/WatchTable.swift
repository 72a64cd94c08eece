import RunLoopKitPlatform

/// The loop's backend watches, by token: a slot per watched descriptor or signal source
/// (and one for the main queue's eventfd), reused after release. Claiming, releasing and
/// finding a watch's source are O(1); a backend keeps its own watchers in an array indexed
/// by the same tokens. It also keeps the identity of the files the loop's descriptor
/// sources were made for (``identities``). Loop thread only.
struct WatchTable {
    /// The source watched under each token; nil for a free slot or a watch with no source.
    private var slots: [EVSource?] = []
    /// Released slots, reused first.
    private var free: [Int] = []
    /// Which open file each watched descriptor number names (``DescriptorRegistry``).
    let identities = DescriptorRegistry()

    /// A token for a new watch of `source` (nil: a watch the loop handles itself).
    mutating func claim(_ source: EVSource?) -> Int {
        if let token = free.popLast() {
            slots[token] = source
            return token
        }
        slots.append(source)
        return slots.count - 1
    }

    /// Frees `token` for reuse.
    mutating func release(_ token: Int) {
        slots[token] = nil
        free.append(token)
    }

    /// The source watched under `token`, if any.
    subscript(token: Int) -> EVSource? { token < slots.count ? slots[token] : nil }

    /// Every watched source.
    var sources: [EVSource] { slots.compactMap { $0 } }
}
