import VaultHelperLauncher

// git runs `git-credential-vault get|store|erase` for `credential.helper vault`.
VaultHelperLauncher.exec(subcommand: "git-credential")
