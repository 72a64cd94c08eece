@testable import RunLoopKit
import Testing

/// One order of the timer queue (a sorted run plus a heap) on its own: after every push,
/// re-key and removal, the run is sorted, the heap is a heap, every slot's position finds
/// its entry, and the earliest entry is the least of all.
@Suite("Timer order")
struct TimerOrderTests {
    /// The order under test, its slots' current entries, and the next tie to hand out.
    private struct Fixture {
        let positions = TimerStore<Int32>()
        let records = TimerStore<TimerRecord>()  // read only for ties outside the window
        let order: TimerOrder
        var live: [Int32: HeapEntry] = [:]
        var free: [Int32] = []
        var nextTie: UInt32 = 1

        init() { order = TimerOrder(positions: positions, records: records) }

        mutating func push(key: Int64) {
            let slot = positions.newSlot(reusing: &free)
            let entry = HeapEntry(key: key, slot: slot, tie: nextTie)
            nextTie += 1
            order.push(entry, exactTies: true)
            live[slot] = entry
        }

        mutating func rekey(_ slot: Int32, to key: Int64) {
            order.rekey(at: positions[Int(slot)], to: key, exactTies: true)
            live[slot]!.key = key
        }

        mutating func remove(_ slot: Int32) {
            order.remove(at: positions[Int(slot)], exactTies: true)
            positions[Int(slot)] = -1
            live[slot] = nil
            free.append(slot)
        }

        func check(_ step: Int) {
            let heap = order.heap
            for index in 1..<max(heap.count, 1) {
                #expect(heap[(index - 1) / TimerHeap.arity].rank <= heap[index].rank, "step \(step): heap at \(index)")
            }
            var inRun = 0
            for run in [order.run, order.secondRun] {
                var previous: HeapEntry?
                for offset in 0..<run.count where !run[offset: offset].isHole {
                    let entry = run[offset: offset]
                    if let previous { #expect(previous.rank < entry.rank, "step \(step): run \(run.id) at \(offset)") }
                    previous = entry
                    inRun += 1
                }
            }
            #expect(heap.count + inRun == live.count, "step \(step): count")
            for (slot, entry) in live {
                let position = positions[Int(slot)]
                #expect(order.holds(slot, at: position), "step \(step): slot \(slot) at \(position)")
                let found = SortedRun.location(ofPosition: position).map { order.run(withID: $0.run)[ringIndex: $0.ringIndex] }
                    ?? heap[Int(position)]
                #expect(found.rank == entry.rank, "step \(step): slot \(slot)'s entry")
            }
            #expect(order.first?.rank == live.values.map(\.rank).min(), "step \(step): first")
        }
    }

    @Test("random pushes, re-keys both ways and removals keep the run, the heap and the positions",
          arguments: [1, 2, 3])
    func randomOperations(seed: UInt64) {
        var random = SplitMix(seed: seed)
        var fixture = Fixture()
        for step in 0..<4_000 {
            let choice = random.next() % 10
            // Few distinct keys, mostly rising, so that both the run and the heap get entries.
            let key = Int64(step / 8) + Int64(random.next() % 40)
            if fixture.live.isEmpty || choice < 4 {
                fixture.push(key: key)
            } else if choice < 8 {
                fixture.rekey(fixture.live.keys.randomElement(using: &random)!, to: key)
            } else {
                fixture.remove(fixture.live.keys.randomElement(using: &random)!)
            }
            fixture.check(step)
        }
    }

    @Test("timers of one interval fired in order are rescheduled into the run, and stay there")
    func repeatingTimersStayInTheRun() {
        var fixture = Fixture()
        for _ in 0..<1_000 { fixture.push(key: 1_000) }
        #expect(fixture.order.heap.isEmpty)
        for fire in 0..<5_000 {
            let first = fixture.order.first!
            #expect(first.key == 1_000 * Int64(1 + fire / 1_000), "fire \(fire)")
            fixture.rekey(first.slot, to: first.key + 1_000)
        }
        #expect(fixture.order.heap.isEmpty)
        fixture.check(0)
    }

    @Test("a front rescheduled after the back moves there over the holes behind it, in a full ring too")
    func frontRotatesOverHoles() {
        var fixture = Fixture()
        for key in 0..<8 { fixture.push(key: Int64(key)) }  // the ring's first 8 cells, all full
        fixture.remove(1)
        fixture.remove(2)  // two holes behind the front
        fixture.rekey(0, to: 100)
        fixture.check(0)
        #expect(fixture.order.first?.key == 3)
        #expect(fixture.order.run.count == 6)  // the holes left with the front
        for step in 1...20 {
            let first = fixture.order.first!
            fixture.rekey(first.slot, to: first.key + 100)
            fixture.check(step)
        }
        #expect(fixture.order.heap.isEmpty)
        fixture.rekey(fixture.order.first!.slot, to: 50)  // earlier than the back: to the second run
        fixture.check(21)
        #expect(fixture.order.secondRun.count == 1)
        fixture.rekey(fixture.order.run.first!.slot, to: 40)  // earlier than both backs: to the heap
        fixture.check(22)
        #expect(fixture.order.heap.count == 1)
    }

    @Test("timers rescheduled behind the ones not yet due, in order among themselves, fill the second run")
    func behindTimersFillTheSecondRun() {
        var fixture = Fixture()
        for _ in 0..<100 { fixture.push(key: 1_000) }
        // A pass behind its timers: the first 60 fire and are rescheduled to 2_000 and 3_000
        // as the clock crosses a grid point; the other 40 stay due at 1_000.
        for fire in 0..<60 {
            let first = fixture.order.first!
            fixture.rekey(first.slot, to: fire < 30 ? 2_000 : 3_000)
            fixture.check(fire)
        }
        // The next pass: the 40 left, then the 30 at 2_000, rescheduled to 3_000 (before the
        // 30 already there, whose ties are later) and then 4_000.
        for fire in 0..<70 {
            let first = fixture.order.first!
            fixture.rekey(first.slot, to: fire < 50 ? 3_000 : 4_000)
            fixture.check(100 + fire)
        }
        #expect(fixture.order.heap.isEmpty)
        #expect(fixture.order.secondRun.count > 0)
    }

    /// With ties outside the window (`exactTies: false`), equal (key, tie) pairs order by the
    /// records' sequences. A hole left in the second run with the (key, tie) of the first run's
    /// candidate must be stepped over, not compared: its slot is -1, and a comparison would
    /// read `records[-1]` (out of bounds) and, on its garbage, stop the walk before a later
    /// entry of the run that precedes the candidate. (The records are departed timers'
    /// records, which carry just the sequences the comparisons read.)
    @Test("earliest(dueBy:) steps over a hole that ties with the best entry so far")
    func earliestStepsOverATiedHole() {
        let positions = TimerStore<Int32>()
        let records = TimerStore<TimerRecord>()
        let order = TimerOrder(positions: positions, records: records)
        // (key, sequence) by slot, one tie for all: equal keys compare the sequences.
        let timers: [(key: Int64, sequence: UInt64)] = [(5, 4), (3, 3), (5, 1), (5, 2)]
        for (slot, timer) in timers.enumerated() {
            positions.append(-1)
            records.append(TimerRecord(departed: timer.sequence))
            order.push(HeapEntry(key: timer.key, slot: Int32(slot), tie: 1), exactTies: false)
        }
        // Slot 0 alone in the first run; 1, 2, 3 in order in the second.
        #expect(order.run.count == 1 && order.secondRun.count == 3 && order.heap.isEmpty)
        order.remove(at: positions[2], exactTies: false)  // a hole between slots 1 and 3
        positions[2] = -1
        #expect(order.secondRun[offset: 1].isHole)
        // Slot 1 is rejected; slot 3 (sequence 2) precedes slot 0 (sequence 4).
        let earliest = order.earliest(dueBy: 5) { $0 != 1 }
        #expect(earliest?.slot == 3)
    }

    @Test("removing most of a run leaves it compacted and still in order")
    func holesAreCompacted() {
        var fixture = Fixture()
        for key in 0..<1_000 { fixture.push(key: Int64(key)) }
        for slot in stride(from: Int32(1), to: 999, by: 1) where slot % 10 != 0 { fixture.remove(slot) }
        #expect(fixture.order.run.count < 300)  // holes compacted away, not just counted
        fixture.check(0)
    }
}
