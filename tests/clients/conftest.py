"""The generated Python client is imported as an integrator's installed copy would be: unpatched,
straight from the checked-in folder (its dependencies, httpx and attrs, are in the project's)."""

import sys

from tests.clients.support import PYTHON_CLIENT

if str(PYTHON_CLIENT) not in sys.path:
    sys.path.insert(0, str(PYTHON_CLIENT))
