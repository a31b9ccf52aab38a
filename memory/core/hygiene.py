"""What is stored of an assistant message: only what was said, never the model's reasoning.

LLMs hand back reasoning in two shapes: content blocks (`{"type": "thinking", ...}`,
`redacted_thinking`, `reasoning`) beside the text blocks, or tags inside the text
(`<think>...</think>`, `<thinking>`, `<reasoning>`, `<scratchpad>`). Both are removed before an
exchange is stored; a reply that was nothing but reasoning is refused as empty.
"""

import re
from collections.abc import Mapping, Sequence
from typing import Any

REASONING_BLOCK_TYPES = frozenset({"thinking", "redacted_thinking", "reasoning", "scratchpad"})
_TAGS = "think|thinking|reasoning|scratchpad|reflection"
# A closed tag pair, or an unclosed opening tag that runs to the end (a truncated reply).
_TAGGED = re.compile(rf"<({_TAGS})\b[^>]*>.*?(?:</\1\s*>|\Z)", re.IGNORECASE | re.DOTALL)
_STRAY_CLOSE = re.compile(rf"</({_TAGS})\s*>", re.IGNORECASE)
_BLANK_LINES = re.compile(r"\n{3,}")


def strip_reasoning_text(text: str) -> str:
    """Remove reasoning tags and their content from a reply's text."""
    cleaned = _TAGGED.sub("", text)
    cleaned = _STRAY_CLOSE.sub("", cleaned)
    return _BLANK_LINES.sub("\n\n", cleaned).strip()


def spoken_text(content: str | Sequence[Mapping[str, Any]]) -> str:
    """The text that was said, from a string or a list of content blocks."""
    if isinstance(content, str):
        return strip_reasoning_text(content)
    parts = []
    for block in content:
        kind = str(block.get("type", "text"))
        if kind in REASONING_BLOCK_TYPES:
            continue
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(strip_reasoning_text(block["text"]))
    return "\n\n".join(part for part in parts if part)
