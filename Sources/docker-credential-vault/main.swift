import VaultHelperLauncher

// Docker runs `docker-credential-vault store|get|erase|list` for `"credsStore": "vault"`.
VaultHelperLauncher.exec(subcommand: "docker-credential")
