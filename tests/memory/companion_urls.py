"""The check-in endpoints at /api/v1/ for tests, while clara/api.py does not mount them yet.

Built like the project's API (bot key, the same error handlers), with the session router
beside it so a test can store the person's reply. Used only when `memory.api_companion.router`
is not already part of `clara.api.api` (see `companion_api` in test_checkins.py).
"""

from django.urls import path
from ninja import NinjaAPI

from clara.api import api as project_api
from memory.api import BotKey

api = NinjaAPI(title="Clara Memory API (check-ins)", urls_namespace="api", auth=BotKey())
api._exception_handlers.update(project_api._exception_handlers)
api.add_router("/", "memory.api.router")
api.add_router("/", "memory.api_companion.router")

urlpatterns = [path("api/v1/", api.urls)]
