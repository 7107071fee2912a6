#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Paths handed to the agent, which runs in `/` and so must be given absolute ones.
enum Paths {
    /// `path` as is when it is absolute, else under the current directory.
    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }
}
