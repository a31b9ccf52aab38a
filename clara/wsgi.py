import os

import django
from django.core.handlers.wsgi import WSGIHandler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clara.settings")

# get_wsgi_application(), with tracing configured in between: its Django instrumentation adds a
# middleware, so it must run before the handler reads MIDDLEWARE (a no-op without an endpoint).
django.setup(set_prefix=False)

from clara import tracing  # noqa: E402

tracing.configure()
application = WSGIHandler()
