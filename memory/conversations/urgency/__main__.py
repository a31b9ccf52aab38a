"""`python -m memory.conversations.urgency`: (re)build the examples' bank if it is stale
(make install runs it; a test fails when the shipped bank is)."""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clara.settings")
django.setup()

import numpy as np  # noqa: E402

from memory.conversations.urgency import examples  # noqa: E402

if examples.BANK.exists() and str(np.load(examples.BANK)["digest"]) == examples.digest():
    print(f"{examples.BANK}: up to date")
else:
    print(examples.build())
