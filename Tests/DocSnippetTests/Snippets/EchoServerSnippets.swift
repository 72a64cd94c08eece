import Dispatch
import Foundation
import Glibc
import RunLoopKit
import Synchronization
import Testing

// DescriptorAndSignalSources.md: the echo server, and a test that talks to it on loopback.

// snippet: echo-server
/// A TCP echo server on 127.0.0.1: one source accepts connections, one source per
/// connection echoes what it reads. Create it, use it and run its loop on one thread.
final class EchoServer {
    let port: UInt16
    private let loop: EVRunLoop
    private var listener: EVSource?
    private var connections: [Int32: EVSource] = [:]

    init(loop: EVRunLoop) throws {
        self.loop = loop
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw EVRunLoop.Error(call: "socket", errno: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")  // port 0: the kernel picks one
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 && listen(fd, 16) == 0
            }
        }
        guard bound else { close(fd); throw EVRunLoop.Error(call: "bind/listen", errno: errno) }
        port = UInt16(bigEndian: address.sin_port)
        // The source owns the socket: invalidating it closes the descriptor.
        let listener = try EVSource(fileDescriptor: fd, closesDescriptor: true, label: "accept",
                                    handler: EVRunLoop.isolated { [unowned self] _ in accept(from: fd) })
        self.listener = listener
        loop.add(listener, forMode: .default)
    }

    /// The listening socket is readable: a client is waiting.
    private func accept(from listener: Int32) {
        let client = Glibc.accept(listener, nil, nil)
        guard client >= 0, let source = try? EVSource(
            fileDescriptor: client, closesDescriptor: true, label: "echo",
            handler: EVRunLoop.isolated { [unowned self] _ in echo(client) }) else { return }
        connections[client] = source
        loop.add(source, forMode: .default)
    }

    /// A connection is readable: data, or the end of the stream.
    private func echo(_ client: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(client, &buffer, buffer.count)
        guard count > 0 else {  // end of stream or error: the client is gone
            connections.removeValue(forKey: client)?.invalidate()  // closes the descriptor
            return
        }
        _ = write(client, buffer, count)  // a real server would wait for `.write` readiness
    }

    /// Stops listening and closes every connection.
    func stop() {
        listener?.invalidate()
        for connection in connections.values { connection.invalidate() }
        connections = [:]
    }

    /// How many clients are connected.
    var connectionCount: Int { connections.count }
}
// end

enum EchoServerMain {
    /// Compiled, not run: it catches SIGINT for the whole process.
    static func main() throws {
        // snippet: echo-server-main
        let loop = EVRunLoop.current
        let server = try EchoServer(loop: loop)
        print("echoing on 127.0.0.1:\(server.port); Ctrl-C stops")
        let interrupt = EVSource(signal: SIGINT) { _ in loop.stop() }  // on the loop's thread
        loop.add(interrupt, forMode: .default)
        loop.run()
        interrupt.invalidate()  // SIGINT's previous disposition again
        server.stop()
        // end
    }
}

/// A value handed between the test's thread and the server's.
final class Handoff<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
}

@Suite struct EchoServerTests {
    @Test("the article's echo server echoes over loopback and drops a closed client")
    func echoesOverLoopback() throws {
        let started = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let port = Handoff<UInt16>(0)
        let clientClosed = Handoff(false)
        let clientsLeft = Handoff(-1)
        let thread = Thread {
            let loop = EVRunLoop.current
            let server = try! EchoServer(loop: loop)
            port.value.withLock { $0 = server.port }
            started.signal()
            // Serve until the client closed and the server dropped it (30 s at most).
            let deadline = ContinuousClock.now + .seconds(30)
            while !(clientClosed.value.withLock { $0 } && server.connectionCount == 0), ContinuousClock.now < deadline {
                loop.run(mode: .default, for: .milliseconds(20))
            }
            clientsLeft.value.withLock { $0 = server.connectionCount }
            server.stop()
            finished.signal()
        }
        thread.start()
        started.wait()

        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.value.withLock { $0 }.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        #expect(connected == 0)
        let message = Array("hello, loop".utf8)
        #expect(write(client, message, message.count) == message.count)
        var reply = [UInt8](repeating: 0, count: 64)
        var received = 0
        while received < message.count {
            let count = reply.withUnsafeMutableBytes { read(client, $0.baseAddress! + received, 64 - received) }
            guard count > 0 else { break }
            received += count
        }
        #expect(Array(reply[..<received]) == message)
        close(client)
        clientClosed.value.withLock { $0 = true }
        finished.wait()
        #expect(clientsLeft.value.withLock { $0 } == 0)
    }
}
