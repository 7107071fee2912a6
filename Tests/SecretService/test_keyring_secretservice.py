"""keyring's own BackendBasicTests on keyring's SecretService backend, against
`vault secret-service` on the bus of DBUS_SESSION_BUS_ADDRESS (scripts/test-secret-service.sh).

keyring's upstream test module (tests/backends/test_SecretService.py) points the backend
at GNOME Keyring's in-memory "session" collection; this provider has one collection, the
vault, so the same tests run on the default collection."""

from keyring.backends import SecretService
from keyring.testing.backend import BackendBasicTests


class TestSecretServiceKeyring(BackendBasicTests):
    def init_keyring(self):
        assert SecretService.Keyring.viable, "keyring's SecretService backend is not viable (SecretStorage missing?)"
        return SecretService.Keyring()
