"""Settings of the test authorization server. Everything that varies comes from the environment:

VAULTAUTH_OAUTH_DB                 the SQLite file (a throwaway one in a temporary directory)
VAULTAUTH_OAUTH_REUSE_PROTECTION   "1": a rotated refresh token presented again revokes its whole family
VAULTAUTH_OAUTH_GRACE_SECONDS      REFRESH_TOKEN_GRACE_PERIOD_SECONDS (default 0)
VAULTAUTH_OAUTH_ACCESS_SECONDS     ACCESS_TOKEN_EXPIRE_SECONDS (default 300)
VAULTAUTH_OAUTH_OIDC               "1": OpenID Connect on, with its discovery document
                                   (/o/.well-known/openid-configuration); off by default: with it on,
                                   the toolkit answered refresh-token grants of password logins with 500
VAULTAUTH_OAUTH_ROOT_METADATA      "1": also serve the RFC 8414 document at the server root
                                   (/.well-known/oauth-authorization-server/o)

OpenID Connect needs an RSA signing key: a new one is generated at each start that enables it, never stored.
"""
import os
import secrets

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

BASE_DIR = os.path.dirname(os.path.abspath(__file__))

# A new key per run: nothing signed by this server outlives it.
SECRET_KEY = secrets.token_urlsafe(50)
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
ROOT_URLCONF = "oauthserver.urls"
USE_TZ = True

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oauth2_provider",
    "oauthserver",
]

MIDDLEWARE = [
    "oauthserver.counters.CountingMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [os.path.join(BASE_DIR, "templates")],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ["VAULTAUTH_OAUTH_DB"],
        # Concurrent token requests: writers queue for the lock instead of failing.
        "OPTIONS": {"timeout": 30, "transaction_mode": "IMMEDIATE"},
    }
}

# Fast hashing for the seeded test users and client secrets: this database lives for one test.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

LOGIN_URL = "/accounts/login/"

OAUTH2_PROVIDER = {
    "ACCESS_TOKEN_EXPIRE_SECONDS": int(os.environ.get("VAULTAUTH_OAUTH_ACCESS_SECONDS", "300")),
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": os.environ.get("VAULTAUTH_OAUTH_REUSE_PROTECTION") == "1",
    "REFRESH_TOKEN_GRACE_PERIOD_SECONDS": int(os.environ.get("VAULTAUTH_OAUTH_GRACE_SECONDS", "0")),
    "PKCE_REQUIRED": True,
    "SCOPES": {"openid": "OpenID Connect", "read": "Read", "write": "Write"},
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"stderr": {"class": "logging.StreamHandler"}},
    # Request lines carry query strings (authorization codes): not logged.
    "loggers": {"django.server": {"handlers": [], "level": "CRITICAL", "propagate": False},
                "django": {"handlers": ["stderr"], "level": "ERROR"}},
}

ROOT_METADATA = os.environ.get("VAULTAUTH_OAUTH_ROOT_METADATA") == "1"

if os.environ.get("VAULTAUTH_OAUTH_OIDC") == "1":
    OAUTH2_PROVIDER["OIDC_ENABLED"] = True
    OAUTH2_PROVIDER["OIDC_RSA_PRIVATE_KEY"] = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
