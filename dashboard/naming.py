"""The person's name and pronouns as the caregivers set them now, in text written earlier.

A session's summary is written once, when the session ends, with the name and pronouns of that
day ("Pat talked with Clara…", "misses their mum"); a memory's sentence is written with "their"
for the person. Caregivers may rename the person or choose she/her later, so pages put the
current name and pronouns into that text when they show it, and stored text stays as written.
"""

import re
from typing import Any

from dashboard.minimum import quotes
from memory.core.person import CaregiverContext

# Summaries say who they were written about (memory.insights.summaries: "written_as"); older ones
# start with the name: "Pat talked with Clara for…", "Pat opened a conversation…".
_OLD_ONE_LINER = re.compile(
    r"^(?P<name>.+?) (?:talked with Clara|opened a conversation with Clara)"
)
_FORMS = {
    "she": {"their": "her", "them": "her", "themselves": "herself", "theirs": "hers"},
    "he": {"their": "his", "them": "him", "themselves": "himself", "theirs": "his"},
}
_THEY_WORDS = re.compile(r"\b(their|them|themselves|theirs)\b", re.IGNORECASE)
# How summaries said "they" for the other pronouns (memory.insights.summaries._third_person).
_BACK_TO_THEY = {
    "she": {"her": "their", "herself": "themselves", "hers": "theirs"},
    "he": {"his": "their", "him": "them", "himself": "themselves"},
}


def with_pronouns(text: str, subject: str) -> str:
    """'Misses their mum' → 'Misses her mum' for she/her (the person's "their" only)."""
    forms = _FORMS.get(subject)
    if not forms or not text:
        return text

    def swap(match: re.Match) -> str:
        word = forms[match.group(0).lower()]
        return word.capitalize() if match.group(0)[0].isupper() else word

    return _THEY_WORDS.sub(swap, text)


def _to_they(text: str, subject: str) -> str:
    forms = _BACK_TO_THEY.get(subject)
    if not forms:
        return text
    pattern = re.compile(r"\b(" + "|".join(forms) + r")\b")
    return pattern.sub(lambda m: forms[m.group(0)], text)


def _renamed(text: str, old: str, new: str) -> str:
    if not text or not old or not new or old == new:
        return text
    return re.sub(rf"(?<!\w){re.escape(old)}(?!\w)", new, text)


def summary_as_now(summary: dict[str, Any], about: CaregiverContext | None) -> dict[str, Any]:
    """The stored summary with the current name and pronouns (a copy; nothing is stored)."""
    if about is None or not summary:
        return summary
    written = summary.get("written_as") or {}
    old_name = written.get("name")
    if not old_name:
        match = _OLD_ONE_LINER.match(summary.get("one_liner") or "")
        old_name = match.group("name") if match else ""
    # Summaries written before "written_as" used the pronouns of that day; "they" unless known.
    old_subject = written.get("subject") or "they"
    name = about.name_or("")
    shown = dict(summary)
    for key in ("one_liner",):
        shown[key] = _renamed(shown.get(key) or "", old_name, name)
    for key in ("what_mattered", "open_loops"):
        lines = []
        for line in shown.get(key) or []:
            line = _renamed(line, old_name, name)
            # A quoted line holds the person's own words: they stay as said.
            if old_subject != about.subject and not quotes(line):
                line = with_pronouns(_to_they(line, old_subject), about.subject)
            lines.append(line)
        shown[key] = lines
    return shown
