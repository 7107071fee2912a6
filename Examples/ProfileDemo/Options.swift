import Foundation
import Logging

/// Command-line options, parsed by hand to keep the example free of dependencies.
struct Options {
    var vaultPath = "\(FileManager.default.homeDirectoryForCurrentUser.path)/.local/share/profile-demo/profile.vault"
    var account = ProcessInfo.processInfo.environment["USER"] ?? "demo"
    var debounce: Duration = .milliseconds(500)
    var deadline: Duration = .seconds(5)
    var logLevel: Logger.Level = .info
    var measure = false
    var runs = 200
    var directory: String?

    static let usage = """
        usage: profile-demo [--vault PATH] [--account NAME] [--debounce-ms N] [--deadline-ms N] [--log-level LEVEL]
               profile-demo --measure [--runs N] [--dir DIR]
        """

    static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        var remaining = arguments[...]
        func value(_ name: String) throws -> String {
            guard let value = remaining.popFirst() else { throw DemoError("\(name) needs a value\n\(usage)") }
            return value
        }
        func number(_ name: String) throws -> Int {
            guard let number = Int(try value(name)), number >= 0 else { throw DemoError("\(name) needs a number\n\(usage)") }
            return number
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--vault": options.vaultPath = try value(argument)
            case "--account": options.account = try value(argument)
            case "--debounce-ms": options.debounce = .milliseconds(try number(argument))
            case "--deadline-ms": options.deadline = .milliseconds(try number(argument))
            case "--log-level":
                guard let level = Logger.Level(rawValue: try value(argument)) else { throw DemoError("unknown log level\n\(usage)") }
                options.logLevel = level
            case "--measure": options.measure = true
            case "--runs": options.runs = max(1, try number(argument))
            case "--dir": options.directory = try value(argument)
            case "-h", "--help":
                print(usage)
                exit(0)
            default: throw DemoError("unknown argument \(argument)\n\(usage)")
            }
        }
        return options
    }
}
