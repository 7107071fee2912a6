"""Counts what the server was asked, for the tests: token requests by grant type and their statuses,
revocations, protected-resource answers by status, and discovery documents served."""
import json
import threading

from django.http import HttpResponse

_lock = threading.Lock()
_counts = {}


def count(name):
    with _lock:
        _counts[name] = _counts.get(name, 0) + 1


def snapshot(request):
    with _lock:
        body = json.dumps(_counts)
    return HttpResponse(body, content_type="application/json")


class CountingMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method == "POST" and request.path == "/o/token/":
            count("token:" + request.POST.get("grant_type", "none"))
        elif request.method == "POST" and request.path == "/o/revoke_token/":
            count("revoke")
        elif "/.well-known/" in request.path:
            count("discovery")
        response = self.get_response(request)
        if request.path == "/o/token/":
            count("token-status:%d" % response.status_code)
        elif request.path.startswith("/api/"):
            count("resource-status:%d" % response.status_code)
        return response
