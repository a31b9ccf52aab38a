"""A bot API client for one key: JSON in and out, any method (for the organisation tests)."""

import json
from urllib.parse import urlencode

from django.test import Client


class Bot:
    def __init__(self, raw_key: str):
        self.client = Client()
        self.headers = {"Authorization": f"Bearer {raw_key}"}

    def call(self, method: str, path: str, body=None, query=None):
        if query:
            path += "?" + urlencode(query, doseq=True)
        if method == "get":
            return self.client.get(path, headers=self.headers)
        data = json.dumps(body) if body is not None else ""
        return self.client.generic(
            method.upper(), path, data, content_type="application/json", headers=self.headers
        )
