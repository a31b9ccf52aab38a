"""Where a memory lives and what it is called: namespaces, keys, entity references, limits.

A namespace is a tuple of at least two non-empty strings; a person's memories live under
`("memories", "<person id>", <type>)`. Stored joined by a unit separator, so a prefix is a range
scan. Entity references look like `person:sarah` (`<type>:<slug>`).
"""

import unicodedata
import uuid
from collections.abc import Sequence

from memory.core.errors import Invalid
from memory.core.sensitive import redact
from memory.facts.models import Memory

SEP = Memory.NAMESPACE_SEPARATOR
PERSON_ROOT = "memories"
MAX_NAMESPACE_PART = 100
MAX_KEY = 200
# Content is limited to 2,048 tokens, estimated at four characters a token.
MAX_CONTENT_TOKENS = 2048
CHARS_PER_TOKEN = 4
MAX_ENTITY_REFS = 20
# The longest a memory may be kept before it is forgotten: ten years, in minutes. Longer is
# "until forgotten" (null); an unbounded number overflows the calendar.
MAX_TTL_MINUTES = 10 * 366 * 24 * 60


# --- Validation -------------------------------------------------------------------------------


def namespace_validate(namespace: Sequence[str], *, field: str = "namespace") -> tuple[str, ...]:
    """A namespace is a tuple of at least two non-empty, trimmed strings."""
    if isinstance(namespace, str) or not isinstance(namespace, Sequence):
        raise Invalid("The namespace must be a list of strings.", field=field)
    parts = tuple(namespace)
    if len(parts) < 2:
        raise Invalid("The namespace needs at least two parts.", field=field)
    for part in parts:
        if not isinstance(part, str) or not part.strip():
            raise Invalid("Every part of the namespace must be a non-empty string.", field=field)
        if part != part.strip():
            raise Invalid("Namespace parts may not start or end with spaces.", field=field)
        if SEP in part or "\x00" in part:
            raise Invalid("Namespace parts may not contain control characters.", field=field)
        if len(part) > MAX_NAMESPACE_PART:
            raise Invalid(
                f"Namespace parts are at most {MAX_NAMESPACE_PART} characters.", field=field
            )
    if len(SEP.join(parts)) > Memory._meta.get_field("namespace").max_length:
        raise Invalid("The namespace is too long.", field=field)
    return parts


def namespace_prefix_validate(prefix: Sequence[str], *, field: str = "prefix") -> tuple[str, ...]:
    """A search or listing prefix may be shorter than a namespace (even empty)."""
    if isinstance(prefix, str) or not isinstance(prefix, Sequence):
        raise Invalid("The prefix must be a list of strings.", field=field)
    parts = tuple(prefix)
    for part in parts:
        if not isinstance(part, str) or not part or SEP in part:
            raise Invalid("Every part of the prefix must be a non-empty string.", field=field)
    return parts


def key_validate(key: str, *, field: str = "key") -> str:
    if not isinstance(key, str) or not key.strip():
        raise Invalid("The key must be a non-empty string.", field=field)
    if len(key) > MAX_KEY:
        raise Invalid(f"The key is at most {MAX_KEY} characters.", field=field)
    return key


def content_validate(content: str) -> str:
    if not isinstance(content, str) or not content.strip():
        raise Invalid("The content must be a non-empty string.", field="content")
    tokens = -(-len(content) // CHARS_PER_TOKEN)
    if tokens > MAX_CONTENT_TOKENS:
        raise Invalid(
            f"The content is about {tokens} tokens; the limit is {MAX_CONTENT_TOKENS} "
            f"(about {MAX_CONTENT_TOKENS * CHARS_PER_TOKEN} characters).",
            field="content",
        )
    return content


def entity_ref_validate(ref: str) -> str:
    """`<type>:<slug>`: a lowercase type, a slug of lowercase letters, digits and underscores."""
    if not isinstance(ref, str) or ":" not in ref:
        raise Invalid(f"Entity refs look like 'person:john' (got {ref!r}).", field="entity_refs")
    kind, slug = ref.split(":", 1)
    if not kind.isascii() or not kind.isalpha() or not kind.islower() or slug != slugify(slug):
        raise Invalid(
            f"Entity refs are '<type>:<slug>' in lowercase with underscores (got {ref!r}).",
            field="entity_refs",
        )
    return ref


def slugify(text: str) -> str:
    """The entity slug rules: lowercase, punctuation removed, spaces and hyphens become underscores."""

    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    out = []
    for ch in ascii_text.lower():
        if ch.isalnum():
            out.append(ch)
        elif ch in " -_":
            out.append("_")
    slug = "_".join(part for part in "".join(out).split("_") if part)
    return slug[:64]


def entity_ref(kind: str, label: str) -> str:
    return f"{kind}:{slugify(label)}"


def clean_text(text: str) -> str:
    """The text with card numbers, passwords and ID numbers redacted (memory/core/sensitive.py)."""
    return redact(text).text


def normalised(text: str) -> str:
    return " ".join("".join(ch for ch in text.lower() if ch.isalnum() or ch.isspace()).split())


def scope_of(namespace: Sequence[str]) -> str:
    """The first two parts: a person's memories, or one agent's/graph's store."""
    return SEP.join(namespace[:2])


def person_namespace(person_id: uuid.UUID, *rest: str) -> tuple[str, ...]:
    return (PERSON_ROOT, str(person_id), *rest)
