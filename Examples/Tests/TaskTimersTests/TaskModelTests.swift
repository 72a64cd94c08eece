import Foundation
import TaskTimers
import Testing

@Suite("Task model and script")
struct TaskModelTests {
    @Test("a script reads into actions; a bad step is named in the error")
    func script() throws {
        #expect(try TaskAction.parse(script: "a, a,wait 1.5,s,d,up,down,j,k,b,q")
            == [.add, .add, .wait(1.5), .scroll, .complete, .up, .down, .down, .up, .toggleBackground, .quit])
        #expect(throws: TaskAction.ScriptError.self) { try TaskAction.parse(script: "a,x") }
        #expect(throws: TaskAction.ScriptError.self) { try TaskAction.parse(script: "wait -1") }
    }

    @Test("adding selects the new task; completing moves the selection to an open one")
    func board() {
        let start = Date(timeIntervalSince1970: 1_000)
        var board = TaskBoard()
        board.add(at: start)
        board.add(at: start.addingTimeInterval(2))
        #expect(board.selectedID == 2)
        let completed = board.completeSelected(at: start.addingTimeInterval(3))
        #expect(completed)
        #expect(board.selectedID == 1)
        #expect(board.rows(at: start.addingTimeInterval(5.5)).map(\.status) == ["created 5 s ago", "done"])
        let completedLast = board.completeSelected(at: start.addingTimeInterval(6))
        #expect(completedLast)
        #expect(!board.hasOpenTasks)
        let completedAgain = board.completeSelected(at: start.addingTimeInterval(7))
        #expect(!completedAgain)
    }

    @Test("a tick-counting row falls behind by the seconds without ticks")
    func tickCountingLag() {
        let start = Date(timeIntervalSince1970: 1_000)
        var board = TaskBoard()
        board.add(at: start)
        board.countTick()
        board.countTick()
        #expect(board.tickCountingLag(at: start.addingTimeInterval(2.5)) == 0)
        #expect(board.tickCountingLag(at: start.addingTimeInterval(7)) == 5)
    }
}
