"""Notes between caregivers on a person (issue 18 item 4): who wrote what, when, for whom.

The model is in models.py (registered with the dashboard app), the reads and writes in
services.py, the notes panel of the person page in views.py.
"""
