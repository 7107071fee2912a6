import Foundation

/// The profile the demo keeps: what an app shows on every screen without waiting for
/// the network.
struct DemoProfile: Codable, Sendable, Equatable {
    var nickname: String
    var bio: String = ""
    var avatarURL: String = ""
    var interests: [String] = []
    var followers: Int = 0

    /// One line for the terminal. The demo prints the profile because showing it is its
    /// job; the library itself never logs profile contents.
    var summary: String {
        "nickname=\(nickname) bio=\(bio) followers=\(followers)"
    }

    /// A profile whose JSON is about 1 KiB, the size the measurements use.
    static func typical(nickname: String) -> DemoProfile {
        DemoProfile(
            nickname: nickname,
            bio: String(repeating: "Swift on Linux, encrypted vaults and long walks. ", count: 14),
            avatarURL: "https://cdn.example.com/avatars/3f1c2a9e-4b7d-4e21-9c55-1d2f3a4b5c6d/large.png",
            interests: ["swift", "cryptography", "sqlite", "linux", "hiking", "photography", "coffee", "chess",
                        "open source", "distributed systems", "music", "running", "cooking", "travel"],
            followers: 1234
        )
    }
}
