@testable import RunLoopKit
import Testing

/// The timer queue's 4-ary heap on its own: after every push, re-key (later or earlier)
/// and removal, each entry ranks at or after its parent and the index store knows where
/// every slot's entry is.
@Suite("Timer heap")
struct TimerHeapTests {
    @Test("random pushes, re-keys both ways and removals keep the heap and its indices", arguments: [1, 2, 3])
    func randomOperations(seed: UInt64) {
        var random = SplitMix(seed: seed)
        let heap = TimerStore<HeapEntry>(childrenInOneLine: true)
        let indices = TimerStore<Int32>()
        let records = TimerStore<TimerRecord>()  // read only for ties outside the window
        var live: [Int32] = []
        var free: [Int32] = []
        var nextTie: UInt32 = 1
        for step in 0..<4_000 {
            let choice = random.next() % 10
            if live.isEmpty || choice < 4 {
                let slot = indices.newSlot(reusing: &free)
                // Few distinct keys, so that many comparisons are ties.
                let key = Int64(random.next() % 50)
                TimerHeap.push(heap, HeapEntry(key: key, slot: slot, tie: nextTie), indices, records, exactTies: true)
                nextTie += 1
                live.append(slot)
            } else if choice < 8 {
                let slot = live[Int(random.next() % UInt64(live.count))]
                let key = Int64(random.next() % 50)
                TimerHeap.rekey(heap, at: Int(indices[Int(slot)]), to: key, indices, records, exactTies: true)
            } else {
                let position = Int(random.next() % UInt64(live.count))
                let slot = live.remove(at: position)
                TimerHeap.remove(heap, at: Int(indices[Int(slot)]), indices, records, exactTies: true)
                indices[Int(slot)] = -1
                free.append(slot)
            }
            #expect(heap.count == live.count, "step \(step)")
            for index in 1..<max(heap.count, 1) {
                #expect(heap[(index - 1) / TimerHeap.arity].rank <= heap[index].rank, "step \(step), index \(index)")
            }
            for slot in live {
                let index = Int(indices[Int(slot)])
                #expect(index >= 0 && index < heap.count && heap[index].slot == slot, "step \(step), slot \(slot)")
            }
        }
    }

    @Test("an entry's key, tie and slot come back as given, and its rank orders by key, then tie")
    func entryFields() {
        let a = HeapEntry(key: -5, slot: 7, tie: 9)
        #expect(a.key == -5 && a.slot == 7 && a.tie == 9)
        var b = HeapEntry(key: .max, slot: 0, tie: 1)
        #expect(a.rank < b.rank)
        b.key = -5
        #expect(b.key == -5 && b.slot == 0 && b.tie == 1)
        #expect(b.rank < a.rank)  // equal keys: the smaller tie first
        #expect(HeapEntry(key: .min, slot: 3, tie: .max).rank < HeapEntry(key: .min + 1, slot: 0, tie: 0).rank)
    }
}
