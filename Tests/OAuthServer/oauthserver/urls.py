"""The authorization server (django-oauth-toolkit under /o/), two protected resources, a login page
and what the tests read."""
import json

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import HttpResponse
from django.urls import include, path
from oauth2_provider.urls import metadata_urlpatterns
from oauth2_provider.views import ProtectedResourceMetadataView, ProtectedResourceView

from . import counters


def me(request):
    owner = request.resource_owner
    return HttpResponse(json.dumps({"user": owner.username if owner else None}), content_type="application/json")


class MeForbidden(ProtectedResourceView):
    """The toolkit's stock protected view: a missing or bad token gets a bare 403."""

    def get(self, request):
        return me(request)


class MeUnauthorized(ProtectedResourceMetadataView):
    """The RFC 9728 variant: a bad token gets 401 with a WWW-Authenticate challenge."""

    def get(self, request):
        return me(request)


def callback(request):
    """The registered redirect URI of the web client: echoes the URL it was called with."""
    return HttpResponse(request.build_absolute_uri(), content_type="text/plain")


urlpatterns = [
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("api/me", MeUnauthorized.as_view()),
    path("api/me-403", MeForbidden.as_view()),
    path("accounts/login/", auth_views.LoginView.as_view()),
    path("callback", callback),
    path("test/counters", counters.snapshot),
]

if settings.ROOT_METADATA:
    # RFC 8414's own location for an issuer with a path: the root, with the issuer's path appended.
    urlpatterns.append(path("", include(metadata_urlpatterns)))
