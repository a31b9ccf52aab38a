"""The settings the test suite runs with: clara/settings.py with DEBUG on, unless DEBUG is set.

DEBUG is off by default (production's rules: every secret must be given), and pytest-django loads
the settings before any conftest.py runs, so this is where a plain `pytest` on a fresh clone turns
the development defaults on. Processes the tests start inherit DEBUG=1, the key and load
clara.settings themselves, exactly as `make run`'s do.
"""

import os

os.environ.setdefault("DEBUG", "1")
# The developer's .env (written by `make run`) is not read by the tests nor the processes they
# start; a test that wants one points CLARA_ENV_FILE at its own.
os.environ.setdefault("CLARA_ENV_FILE", "")
# A key of the run's own, not the development one DEBUG would derive: a DEBUG=0 process the tests
# start (tests/integration/test_deploy.py) must read what they wrote, and refuses that one.
if "CLARA_ENCRYPTION_KEYS" not in os.environ:
    import base64
    import secrets

    os.environ["CLARA_ENCRYPTION_KEYS"] = base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()
# For child processes only: this process has already chosen its settings module (this one).
os.environ["DJANGO_SETTINGS_MODULE"] = "clara.settings"

from clara.settings import *  # noqa: E402, F403

# A second alias over the same test database, so the read-replica router can be tested
# (tests/test_replica.py turns the router on); unused unless a test routes to it.
if "replica" not in DATABASES:  # noqa: F405
    DATABASES["replica"] = {**DATABASES["default"], "TEST": {"MIRROR": "default"}}  # noqa: F405
# No recovery-log replay thread in the test process (a test that appends would otherwise have its
# log replayed behind its back, into whichever test runs next); tests/integration/
# test_recovery_replay.py runs real servers, which have theirs.
CLARA_RECOVERY_REPLAY_SECONDS = 0
# PDFs render in a nice-19 process (dashboard/pdf.py), which a machine loaded by other work starves
# for tens of seconds: past production's 25 s a test's report came back "busy" (503). Tests of the
# timeout itself set their own.
CLARA_PDF_TIMEOUT_SECONDS = 120
