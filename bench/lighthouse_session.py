#!/usr/bin/env python
"""Print a session cookie of a demo login, its second factor passed, for Lighthouse (not a test).

    DEBUG=1 CLARA_DATA_DIR=DIR .venv/bin/python bench/lighthouse_session.py demo

Run against the database the server serves (the same CLARA_DATA_DIR or DATABASE_URL); give the
value to Lighthouse as `--extra-headers='{"Cookie": "sessionid=VALUE"}'` (docs/benchmarks.md,
"Lighthouse"). The session is what the login page and the second step would have made: the
login, its authenticator device (when it has one) and when the login began.
"""

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clara.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth import (  # noqa: E402
    BACKEND_SESSION_KEY,
    HASH_SESSION_KEY,
    SESSION_KEY,
    get_user_model,
)
from django.contrib.sessions.backends.db import SessionStore  # noqa: E402
from django_otp import DEVICE_ID_SESSION_KEY  # noqa: E402

from dashboard import sessions  # noqa: E402
from dashboard.second_factor.models import AuthenticatorDevice  # noqa: E402


def main(username: str) -> str:
    user = get_user_model().objects.get(username=username)
    device = AuthenticatorDevice.objects.filter(user=user, confirmed=True).first()
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    if device is not None:
        session[DEVICE_ID_SESSION_KEY] = device.persistent_id
    session[sessions.LOGIN_STARTED] = session[sessions.LAST_ACTIVITY] = time.time()
    session.create()
    return session.session_key


if __name__ == "__main__":
    print(main(sys.argv[1] if len(sys.argv) > 1 else "demo"))
