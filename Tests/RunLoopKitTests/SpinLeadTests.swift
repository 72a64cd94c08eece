@testable import RunLoopKitBackend
import Testing

/// When the libev backend spins before a precise deadline: only while its budget can pay
/// for a spin before at least one precise wake in four.
@Suite("Spin lead")
struct SpinLeadTests {
    @Test("a 10 ms timer's wakes are spun; a 1 ms timer's are not, as the budget covers one in ten")
    func leadFollowsTheWakeRate() {
        // 50 µs mean oversleep: a 100 µs lead.
        #expect(LibevBackend.spinLead(budget: 2_000_000, meanOversleep: 50_000, meanPeriod: 10_000_000) == 100_000)
        #expect(LibevBackend.spinLead(budget: 2_000_000, meanOversleep: 50_000, meanPeriod: 1_000_000) == 0)
        #expect(LibevBackend.spinLead(budget: 2_000_000, meanOversleep: 50_000, meanPeriod: 2_500_000) == 100_000)
    }

    @Test("no spin without the budget for it, and the lead stays within 10–250 µs")
    func budgetAndBounds() {
        #expect(LibevBackend.spinLead(budget: 99_999, meanOversleep: 50_000, meanPeriod: 10_000_000) == 0)
        #expect(LibevBackend.spinLead(budget: 2_000_000, meanOversleep: 1_000, meanPeriod: 10_000_000) == 10_000)
        #expect(LibevBackend.spinLead(budget: 2_000_000, meanOversleep: 900_000, meanPeriod: 10_000_000) == 250_000)
    }
}
