from django.contrib import admin
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
    path("", include("dashboard.urls")),
]
