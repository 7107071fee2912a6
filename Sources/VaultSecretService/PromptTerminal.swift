#if canImport(Glibc)
import Glibc
#endif
import VaultKit

/// The provider's controlling terminal while an unlock prompt asks on it for the
/// passphrase: echo off, a line at a time, read only when poll says a line is there, so
/// the provider keeps serving while nobody types. Echo comes back when this goes.
final class PromptTerminal {
    let fd: Int32
    private var saved = termios()
    private var line = SecretBytes()

    /// Opens /dev/tty, or nil when the provider has no terminal (a service, a pipe).
    init?() {
        fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        guard tcgetattr(fd, &saved) == 0 else {
            close(fd)
            return nil
        }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO | ECHOE | ECHOK | ECHONL)
        quiet.c_lflag |= tcflag_t(ICANON)
        guard tcsetattr(fd, TCSAFLUSH, &quiet) == 0 else {
            close(fd)
            return nil
        }
    }

    deinit {
        _ = tcsetattr(fd, TCSAFLUSH, &saved)
        close(fd)
    }

    func say(_ text: String) {
        var bytes = Array(text.utf8.map { $0 < 0x20 && $0 != 0x0A ? UInt8(ascii: "?") : $0 })
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { break }
            offset += written
        }
        bytes.removeAll()
    }

    /// What reading found: a whole line (without its newline), nothing yet, or the end.
    enum Input {
        case line(SecretBytes)
        case pending
        case ended
    }

    /// Reads what the terminal has now.
    func read() -> Input {
        var byte: UInt8 = 0
        defer { byte = 0 }
        while true {
            let count = Glibc.read(fd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .pending }
            guard count == 1 else { return .ended }
            if byte == UInt8(ascii: "\n") {
                var typed = line
                line = SecretBytes()
                if typed.withUnsafeBytes({ $0.last }) == UInt8(ascii: "\r") { typed.removeLast() }
                return .line(typed)
            }
            guard line.count < 64 * 1024 else { return .ended }
            line.append(byte)
        }
    }
}
