"""One client for an OpenAI-compatible chat model (`POST {CLARA_LLM_URL}/chat/completions`).

Used where an LLM may do better than Clara's rules, always with a rule-based fallback: the
caregivers' session summaries (memory/insights/summaries.py) and the reference companion's
replies (memory/companion/bot.py). Nothing here retries or falls back on its own: a caller gets
`LLMError` for any failure (network, status, shape, empty answer) and keeps its own fallback.
"""

from __future__ import annotations

import httpx
from django.conf import settings


class LLMError(Exception):
    """The model could not be reached or gave no usable answer."""


class ChatModel:
    """An OpenAI-compatible chat completions endpoint."""

    def __init__(
        self,
        url: str,
        model: str = "default",
        api_key: str | None = None,
        *,
        timeout: float = 20.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.url = url.rstrip("/") + "/chat/completions"
        self.model = model
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(headers=headers, timeout=timeout, transport=transport)

    def complete(self, messages: list[dict], *, temperature: float, max_tokens: int) -> str:
        """The model's reply to `messages`, stripped; `LLMError` if there is none."""
        body = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        try:
            response = self._http.post(self.url, json=body)
            response.raise_for_status()
            text = response.json()["choices"][0]["message"]["content"].strip()
        except (
            httpx.HTTPError,
            ValueError,
            KeyError,
            IndexError,
            TypeError,
            AttributeError,
        ) as exc:
            raise LLMError(repr(exc)) from exc
        if not text:
            raise LLMError("empty reply")
        return text


def chat_model(*, timeout: float | None = None) -> ChatModel | None:
    """The model configured by CLARA_LLM_URL (+ _MODEL, _API_KEY, _TIMEOUT); None when unset."""
    url = (settings.CLARA_LLM_URL or "").strip()
    if not url:
        return None
    return ChatModel(
        url,
        settings.CLARA_LLM_MODEL or "default",
        settings.CLARA_LLM_API_KEY or None,
        timeout=settings.CLARA_LLM_TIMEOUT if timeout is None else timeout,
    )
