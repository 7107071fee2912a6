"""Migrates the throwaway database, seeds the test clients and users, and serves on 127.0.0.1.

Prints one line, `LISTENING <port>`, once the socket accepts connections; exits when its parent
(the test process) dies, so a crashed test run never leaves a server behind.
"""
import os
import sys
import threading
import time

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler, get_internal_wsgi_application
from oauth2_provider.models import Application

# The seeded clients: id -> (type, grant, secret or None). The Swift tests use the same values.
CLIENTS = {
    "vaultauth-public": (Application.CLIENT_PUBLIC, Application.GRANT_PASSWORD, None),
    "vaultauth-confidential": (Application.CLIENT_CONFIDENTIAL, Application.GRANT_PASSWORD, "confidential-secret"),
    "vaultauth-service": (Application.CLIENT_CONFIDENTIAL, Application.GRANT_CLIENT_CREDENTIALS, "service-secret"),
    "vaultauth-web": (Application.CLIENT_PUBLIC, Application.GRANT_AUTHORIZATION_CODE, None),
}
USERS = {"alice": "wonderland", "bob": "builder"}


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):
        pass


class Command(BaseCommand):
    help = "Serve django-oauth-toolkit for the VaultAuth tests."

    def handle(self, *args, **options):
        parent = os.getppid()
        call_command("migrate", verbosity=0, interactive=False)
        server = ThreadedWSGIServer(("127.0.0.1", 0), QuietHandler, ipv6=False)
        server.daemon_threads = True
        server.set_app(get_internal_wsgi_application())
        port = server.server_address[1]
        for name, password in USERS.items():
            get_user_model().objects.create_user(name, password=password)
        for client_id, (client_type, grant, secret) in CLIENTS.items():
            Application.objects.create(
                client_id=client_id, name=client_id, client_type=client_type, authorization_grant_type=grant,
                client_secret=secret or "", hash_client_secret=True,
                redirect_uris="http://127.0.0.1:%d/callback" % port, skip_authorization=True,
                user=get_user_model().objects.get(username="alice") if grant == Application.GRANT_CLIENT_CREDENTIALS else None)

        def watch_parent():
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(0)

        threading.Thread(target=watch_parent, daemon=True).start()
        sys.stdout.write("LISTENING %d\n" % port)
        sys.stdout.flush()
        server.serve_forever()
