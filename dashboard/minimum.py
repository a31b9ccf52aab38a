"""Minimum necessary: what a member without the transcript right sees of a conversation.

Summaries and analytics are for every member of the care team; the person's own words are only
for members granted the transcript right (dashboard.access.Need.TRANSCRIPTS). Pages that show a
summary pass it through here, so one rule decides, and a page added later calls the same one.
tests/dashboard/test_minimum_necessary.py renders every dashboard URL as each role and looks for
the person's sentences.
"""

import dataclasses
from typing import Any

# A point that quotes the person ("Said “…”", or an LLM's point with a quotation in it).
_QUOTE_MARKS = ("“", "”", '"', "„", "«", "»")


def quotes(text: str) -> bool:
    """Whether a summary line carries a quotation (the person's own words)."""
    return any(mark in text for mark in _QUOTE_MARKS)


def summary_for(summary: dict[str, Any] | None, *, with_words: bool) -> dict[str, Any]:
    """The session summary as this member may see it: without quotes unless `with_words`."""
    summary = dict(summary or {})
    if with_words:
        return summary
    points = summary.get("what_mattered") or []
    kept = [point for point in points if not quotes(point)]
    summary["what_mattered"] = kept
    loops = summary.get("open_loops") or []
    # "was still asking “When is …?”": a loop may quote too; its paraphrases stay.
    summary["open_loops"] = [loop for loop in loops if not quotes(loop)]
    summary["words_withheld"] = len(kept) < len(points) or len(summary["open_loops"]) < len(loops)
    if quotes(summary.get("one_liner") or ""):
        summary["one_liner"] = ""
    return summary


def row_for(row, *, with_words: bool):
    """A conversation row (dashboard.selectors.SessionRow) with its summary as this member may
    see it: a one-line summary that quotes the person is replaced by Clara's own line."""
    if with_words:
        return row
    return dataclasses.replace(row, summary=summary_for(row.summary, with_words=False))
