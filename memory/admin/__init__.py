"""The operators' admin for the memory app, one module per part.

Every changelist selects its related rows up front, so a page costs the same few queries
however many rows it shows.
"""

from django.contrib import admin

from memory.admin import (  # noqa: F401 - registers the pages
    companion,
    conversations,
    facts,
    homes,
    insights,
    organisations,
    webhooks,
)
from memory.admin.conversations import SESSION_PAGE_MESSAGES  # noqa: F401

admin.site.site_header = "Clara Memory"
admin.site.site_title = "Clara Memory admin"
admin.site.index_title = "Conversation memory"
