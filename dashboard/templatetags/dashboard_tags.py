"""Template helpers of the dashboard."""

from django import template

register = template.Library()


@register.filter
def lookup(mapping: dict, key):
    """{{ words|lookup:value }}: the entry of a dict for a key, or the key itself."""
    return mapping.get(key, key) if isinstance(mapping, dict) else key
