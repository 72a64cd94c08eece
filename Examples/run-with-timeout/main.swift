import Glibc
import RunLoopKit

// Runs a command with a timeout on the main loop: the command's output is read through a
// descriptor source as it comes, a one-shot timer kills the command at the timeout, and a
// child source reports how it ended and reaps it, so no zombie is left. Exits with the
// command's status, or 128 + the signal that ended it (137 when the timeout killed it).

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.isEmpty || arguments[0] == "-h" || arguments[0] == "--help" {
    print("""
        OVERVIEW: Runs a command, printing its output as it comes; kills it after the timeout.

        USAGE: run-with-timeout [--timeout SECONDS] COMMAND [ARGUMENT...]

        OPTIONS:
          --timeout SECONDS  Kill the command (SIGKILL) after this long (default 5).
          -h, --help         Show help information.
        """)
    exit(arguments.isEmpty ? 64 : 0)
}
var seconds = 5.0
if arguments[0] == "--timeout", arguments.count >= 3, let value = Double(arguments[1]), value > 0 {
    seconds = value
    arguments.removeFirst(2)
}
let timeout = seconds

/// Writes a line to standard output (or `fd`) unbuffered, in order with the command's output.
func say(_ text: String, to fd: Int32 = STDOUT_FILENO) {
    var line = text + "\n"
    line.withUTF8 { _ = write(fd, $0.baseAddress, $0.count) }
}

// The command writes its output and errors into a pipe; the loop reads the other end.
var pipeEnds: [Int32] = [0, 0]
guard pipe(&pipeEnds) == 0 else { say("run-with-timeout: pipe: errno \(errno)", to: STDERR_FILENO); exit(71) }
var actions = posix_spawn_file_actions_t()
posix_spawn_file_actions_init(&actions)
posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 2)
posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
let argv = arguments.map { strdup($0) } + [nil]
var spawned: pid_t = 0
let spawnStatus = posix_spawnp(&spawned, arguments[0], &actions, nil, argv, environ)
close(pipeEnds[1])
guard spawnStatus == 0 else {
    say("run-with-timeout: cannot run \(arguments[0]): \(String(cString: strerror(spawnStatus)))", to: STDERR_FILENO)
    exit(127)
}
let pid = spawned

let loop = EVRunLoop.current
let readEnd = pipeEnds[0]
let output = try EVSource(fileDescriptor: readEnd, closesDescriptor: true, label: "output") { source in
    var buffer = [UInt8](repeating: 0, count: 4096)
    let count = read(readEnd, &buffer, buffer.count)
    if count > 0 { _ = write(STDOUT_FILENO, buffer, count) } else { source.invalidate() }  // end of output
}
let timer = EVTimer(interval: timeout, repeats: false, label: "timeout") { _ in
    say("run-with-timeout: \(timeout) s passed, killing \(pid)")
    kill(pid, SIGKILL)
}
let child = try EVSource(childProcess: pid, label: "child") { _ in loop.stop() }
loop.add(output, forMode: .default)
loop.add(timer, forMode: .default)
loop.add(child, forMode: .default)
loop.run()  // until the child source stops it
timer.invalidate()
// What the command wrote just before it exited; a descendant may keep the pipe open, so stop
// at the first poll that reads nothing.
while output.isValid, loop.run(mode: .default, for: .zero, returnAfterSourceHandled: true) == .handledSource {}
output.invalidate()

var leftover: Int32 = 0
let noChildLeft = waitpid(-1, &leftover, WNOHANG) == -1 && errno == ECHILD
say("run-with-timeout: \(arguments[0]) \(child.childExit.map { "\($0)" } ?? "was reaped elsewhere"); "
    + (noChildLeft ? "no zombie left" : "a child is left"))
switch child.childExit {
case .exited(let status): exit(status)
case .signalled(let signal): exit(128 + signal)
case nil: exit(70)
}
