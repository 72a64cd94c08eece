import ExampleSupport
import Foundation
import Testing
import TodoCountdown

@Suite("TodoList")
struct TodoListTests {
    let start = Date(timeIntervalSince1970: 1_767_225_600.25)

    @Test("sample items are due at whole seconds, +10 s apart, and count down to done")
    func sampleCountdown() {
        let list = TodoList.sample(count: 3, start: start, removesDone: false)
        #expect(list.items.map(\.dueSecond) == [1_767_225_611, 1_767_225_621, 1_767_225_631])
        let rows = list.rows(at: Date(timeIntervalSince1970: 1_767_225_620.999))
        #expect(rows.map(\.status) == ["done", "1 s", "11 s"])
        #expect(list.rows(at: Date(timeIntervalSince1970: 1_767_225_621)).map(\.status) == ["done", "done", "10 s"])
    }

    @Test("the selected item stays selected when done rows above it are removed")
    func selectionKeptAcrossRemovals() {
        var list = TodoList.sample(count: 5, start: start, removesDone: true)
        list.select(row: 2)
        #expect(list.selectedID == 3)
        list.removeDone(at: Date(timeIntervalSince1970: 1_767_225_625))  // items 1 and 2 are due
        #expect(list.items.map(\.id) == [3, 4, 5])
        #expect(list.selectedID == 3)
        #expect(list.selectedRow == 0)
        #expect(list.rows(at: Date(timeIntervalSince1970: 1_767_225_625)).filter(\.isSelected).map(\.id) == [3])
    }

    @Test("when the selected item itself is removed, the one taking its row is selected")
    func selectionMovesOnWhenSelectedRemoved() {
        var list = TodoList.sample(count: 3, start: start, removesDone: true)
        list.select(row: 0)
        list.removeDone(at: Date(timeIntervalSince1970: 1_767_225_612))
        #expect(list.selectedID == 2)
        list.removeDone(at: Date(timeIntervalSince1970: 1_767_225_640))
        #expect(list.items.isEmpty)
        #expect(list.selectedID == nil)
    }

    @Test("moving the selection stops at the ends")
    func moveSelection() {
        var list = TodoList.sample(count: 3, start: start, removesDone: false)
        list.moveSelection(by: -1)
        #expect(list.selectedRow == 0)
        list.moveSelection(by: 5)
        #expect(list.selectedRow == 2)
    }

    @Test("arrow keys and single characters are parsed from raw terminal bytes")
    func keys() {
        let bytes: [UInt8] = [0x1B, 0x5B, 0x41, 0x6A, 0x1B, 0x5B, 0x42, 0x1B, 0x5B, 0x43, 0x71]
        #expect(Key.parse(bytes) == [.up, .character("j"), .down, .character("q")])
    }
}
