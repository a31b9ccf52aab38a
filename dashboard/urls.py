"""The caregiver dashboard's pages and htmx partials."""

app_name = "dashboard"

urlpatterns: list = []
