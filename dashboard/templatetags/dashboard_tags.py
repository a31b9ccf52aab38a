"""Template helpers of the dashboard."""

from html import escape

from django import template
from django.utils import timezone
from django.utils.safestring import mark_safe

register = template.Library()


@register.filter
def lookup(mapping: dict, key):
    """{{ words|lookup:value }}: the entry of a dict for a key, or the key itself."""
    return mapping.get(key, key) if isinstance(mapping, dict) else key


@register.filter
def lookup_or_none(mapping, key):
    """{{ suggestions|lookup_or_none:memory.id }}: the entry for str(key), or None."""
    return mapping.get(str(key)) if isinstance(mapping, dict) else None


@register.filter
def when(value):
    """'today at 18:40', 'yesterday at 09:05', 'Tuesday at 19:23', '3 November at 19:23'.

    In the active time zone (the views render in the person's own), relative to now there.
    """
    if not value:
        return ""
    local = timezone.localtime(value)
    today = timezone.localtime(timezone.now()).date()
    days = (today - local.date()).days
    clock = local.strftime("%H:%M")
    if days == 0:
        return f"today at {clock}"
    if days == 1:
        return f"yesterday at {clock}"
    if 1 < days < 7:
        return f"{local.strftime('%A')} at {clock}"
    day = f"{local.day} {local.strftime('%B')}"
    if local.year != today.year:
        day += f" {local.year}"
    return f"{day} at {clock}"


@register.filter
def person_label(person) -> str:
    """{{ person|person_label }}: the name caregivers use (dashboard.selectors.person_name)."""
    from dashboard import selectors

    return selectors.person_name(person)


@register.filter
def age(value):
    """{{ alert.created|age }}: how long ago, short ('4 min', '1 h 20 min', '2 days')."""
    if not value:
        return ""
    from dashboard import words

    return words.age((timezone.now() - value).total_seconds())


@register.filter
def as_person(memory, subject: str) -> str:
    """{{ memory|as_person:subject }}: what Clara remembers, with the person's pronouns.

    The fact reader writes "their" for the person ("Misses their mum"); with she/her chosen the
    page says "Misses her mum". Caregivers' own sentences are shown as they wrote them.
    """
    from dashboard.naming import with_pronouns
    from memory.models import Memory

    content = getattr(memory, "content", "") or ""
    if getattr(memory, "source", None) != Memory.Source.CONVERSATION_EXTRACTION:
        return content
    return with_pronouns(content, subject)


@register.simple_tag
def options(choices, chosen) -> str:
    """{% options people filter.raw.person %}: an <option> per (value, label), `chosen` selected.
    Written in one pass with the standard library's escaping: a care group's audit offers
    thousands of people, and a template loop (or format_html per option) writing them was a
    third of the page's time."""
    return mark_safe(
        "".join(
            f'<option value="{escape(str(value))}"{" selected" if value == chosen else ""}>'
            f"{escape(str(label))}</option>"
            for value, label in choices
        )
    )
