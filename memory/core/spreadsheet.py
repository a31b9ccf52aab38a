"""Cells a spreadsheet shows as text, never runs as a formula (OWASP "CSV injection").

Text that a family member types into the profile, or an API key writes as a memory, ends up in
the team admin's spreadsheet. A cell that starts with `=`, `+`, `-` or `@` (or with a tab or a
carriage return, which some spreadsheets skip before reading a formula) is a live formula there:
`=HYPERLINK(...)` leaks what the sheet holds, `=WEBSERVICE(...)` calls out, `-2+3+cmd|...` runs a
program through DDE. Such a cell gets a leading `'` (OWASP's advice), which spreadsheets show as
text and do not run; the text after it is kept whole, so nothing is lost. Leading whitespace does
not hide a formula (`"  =1+1"`, `"\\n=1+1"`): the first character after it counts too.

Every text cell is checked, "-" alone and "-5" included (a harmless "'-" is better than a rule
about which minus signs are safe). Numbers, booleans and None are written as themselves: a
float or an int from a typed column cannot hold a formula, and a negative number stays a number.
The writer quotes every cell (OWASP: wrap each cell in double quotes, double the quotes inside),
so a delimiter or a line break inside text never starts a new cell or a new row.
"""

import csv
import io
from collections.abc import Iterable
from typing import Any

# What a spreadsheet reads as the start of a formula (OWASP), and what it skips before one.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_SKIPPED = " \t\r\n\v\f\u00a0"


def cell(value: Any) -> Any:
    """One cell, safe to open in a spreadsheet: text that could start a formula gets a `'`."""
    if value is None or isinstance(value, bool | int | float):
        return value
    text = str(value)
    if text.startswith(FORMULA_STARTS) or text.lstrip(_SKIPPED).startswith(FORMULA_STARTS):
        return "'" + text
    return text


def csv_text(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    """A whole CSV document, every cell through `cell()` and quoted."""
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL)
    writer.writerow([cell(name) for name in header])
    for row in rows:
        writer.writerow([cell(value) for value in row])
    return out.getvalue()
