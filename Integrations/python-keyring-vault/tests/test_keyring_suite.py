"""keyring's own test suite for backends, run against the real ``vault`` command."""

from keyring.testing.backend import BackendBasicTests

from keyrings.vaultkit import VaultKitKeyring


class TestVaultKitKeyring(BackendBasicTests):
    def init_keyring(self):
        return VaultKitKeyring()
