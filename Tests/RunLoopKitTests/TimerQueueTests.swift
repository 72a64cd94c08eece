@testable import RunLoopKit
import Testing

/// One mode's timer queue on its own, against a plain model: timers added, removed (an exact
/// timer's entry departs lazily and is purged in bulk), re-dated and fired in passes. Every
/// pass must fire exactly the live timers due, in order of (fire date, creation), and the
/// queue must hold exactly the live timers.
@Suite("Timer queue")
struct TimerQueueTests {
    /// The queue under test and, by timer, its slot: the model is the timers themselves.
    private struct Fixture {
        var queue = TimerQueue()
        var live: [ObjectIdentifier: (timer: EVTimer, slot: Int32)] = [:]

        mutating func add(fire: Int64, tolerance: Int64) {
            let timer = EVTimer(
                start: .instant(fire), intervalNanos: 0, repeats: false, toleranceNanos: tolerance,
                alignmentOffsetNanos: nil, label: nil) { _ in }
            live[ObjectIdentifier(timer)] = (timer, queue.insert(timer))
        }

        mutating func remove(_ id: ObjectIdentifier) {
            let (timer, slot) = live.removeValue(forKey: id)!
            queue.remove(slot, of: timer)
        }

        mutating func redate(_ id: ObjectIdentifier, to fire: Int64) {
            let (timer, slot) = live[id]!
            timer.fireNanos = fire
            queue.update(slot)
        }

        /// A firing pass at `now`: checks the order against the model; each timer fired is
        /// removed or re-dated past `now` (as a one-shot or a repeating timer would be).
        mutating func firePass(at now: Int64, step: Int, random: inout SplitMix) {
            let due = live.values.map(\.timer).filter { $0.fireNanos <= now }
                .sorted { ($0.fireNanos, $0.sequence) < ($1.fireNanos, $1.sequence) }
            var fired: [EVTimer] = []
            queue.beginFiringPass()
            while let next = queue.nextDue(at: now) {
                let timer = next.takeUnretainedValue()
                fired.append(timer)
                if random.next() % 2 == 0 {
                    remove(ObjectIdentifier(timer))
                } else {
                    redate(ObjectIdentifier(timer), to: now + 1 + Int64(random.next() % 500))
                }
            }
            let firstWrong = zip(fired, due).enumerated().first { $0.element.0 !== $0.element.1 }?.offset
            #expect(fired.count == due.count && firstWrong == nil,
                    "step \(step): pass at \(now) fired \(fired.count) of \(due.count) due, first out of order: \(firstWrong ?? -1)")
        }

        func check(_ step: Int) {
            #expect(queue.isEmpty == live.isEmpty, "step \(step): isEmpty")
            #expect(Set(queue.allTimers.map(ObjectIdentifier.init)) == Set(live.keys), "step \(step): timers")
        }
    }

    @Test("adds, removals, re-dates and passes fire exactly the live timers due, in order",
          arguments: [1, 2, 3] as [UInt64])
    func randomOperations(seed: UInt64) {
        var random = SplitMix(seed: seed)
        var fixture = Fixture()
        var now: Int64 = 0
        for step in 0..<6_000 {
            let choice = random.next() % 20
            // Fire dates ahead of now, often equal (creation order decides), some tolerant.
            let fire = now + Int64(random.next() % 300)
            if fixture.live.isEmpty || choice < 7 {
                fixture.add(fire: fire, tolerance: random.next() % 5 == 0 ? 50 : 0)
            } else if choice < 15 {
                // Removals outnumber adds in bursts, so that departed entries are purged.
                for _ in 0..<(1 + random.next() % 4) where !fixture.live.isEmpty {
                    fixture.remove(fixture.live.keys.randomElement(using: &random)!)
                }
            } else if choice < 17 {
                fixture.redate(fixture.live.keys.randomElement(using: &random)!, to: fire)
            } else {
                now += Int64(random.next() % 200)
                fixture.firePass(at: now, step: step, random: &random)
            }
            fixture.check(step)
        }
        fixture.queue.releaseAll()
    }

    @Test("removing most timers purges their entries and leaves the others in order",
          arguments: [4, 5] as [UInt64])
    func purgeKeepsOrder(seed: UInt64) {
        var random = SplitMix(seed: seed)
        var fixture = Fixture()
        // Dates out of order (the heap), with ties; then 80 % removed: a purge at 75 %.
        for _ in 0..<2_000 { fixture.add(fire: Int64(random.next() % 500), tolerance: 0) }
        for id in fixture.live.keys.shuffled(using: &random).prefix(1_600) { fixture.remove(id) }
        fixture.check(0)
        #expect(fixture.live.values.map(\.slot).max()! < 2_000)
        fixture.firePass(at: 500, step: 1, random: &random)
        fixture.check(1)
        fixture.queue.releaseAll()
    }

    @Test("a queue whose timers all leave is empty, and takes new timers in the freed slots")
    func allDepart() {
        var fixture = Fixture()
        for index in 0..<1_000 { fixture.add(fire: Int64(index % 37), tolerance: 0) }
        for id in Array(fixture.live.keys) { fixture.remove(id) }
        fixture.check(0)
        #expect(fixture.queue.wake.first == .max)
        for index in 0..<1_000 { fixture.add(fire: Int64(index % 37), tolerance: 0) }
        #expect(fixture.live.values.allSatisfy { $0.slot < 1_000 })
        var random = SplitMix(seed: 9)
        fixture.firePass(at: 40, step: 1, random: &random)
        fixture.check(1)
        fixture.queue.releaseAll()
    }
}
