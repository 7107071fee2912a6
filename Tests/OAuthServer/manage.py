#!/usr/bin/env python3
"""The VaultAuth tests' real authorization server: django-oauth-toolkit in a small Django project.

    python3 manage.py vaultauth_test_server     migrate a throwaway SQLite database, seed the test
                                               clients and users, serve on 127.0.0.1 (a free port)

Configured through the environment (see oauthserver/settings.py); started and stopped by the
Swift tests (Tests/VaultAuthTests/RealServer/DjangoOAuthServer.swift).
"""
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "oauthserver.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
