from django.contrib import admin
from django.http import HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path

from clara import health
from clara.api import api

urlpatterns = [
    # Normally answered by clara.middleware.HealthCheckMiddleware before routing; listed here
    # so they have names and still work if that middleware is ever removed.
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
    # Browsers ask for /favicon.ico whatever the page links; the icon is a static file.
    path("favicon.ico", lambda request: HttpResponsePermanentRedirect(static("favicon.svg"))),
    path("", include("dashboard.urls")),
]

# DEBUG off; with DEBUG on dashboard.errors.ErrorPagesMiddleware answers the same.
handler403 = "dashboard.errors.forbidden"
handler404 = "dashboard.errors.not_found"
handler500 = "dashboard.errors.server_error"
