"""The family's page of a person (issue 32 item 1): written for a daughter or a son, not a shift.

How the person has been (in words, never scores), what helps, what is coming up, the notes for
family, and the weekly summary's opt-in at the top; no staff controls. `views.person_page` is
what dashboard.views.person hands a family member's request to; `selectors.family_page` reads
what the page shows, through the same selectors and the same note rule as the staff page
(dashboard.notes.services).
"""
