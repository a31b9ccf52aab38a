"""WCAG AA contrast of the dashboard's colours, read from static/dashboard/dashboard.css.

Text pairs need 4.5:1, badges' and charts' marks and the focus ring 3:1, in both themes.
"""

import re
from pathlib import Path

import pytest

from dashboard import charts

CSS = Path(__file__).resolve().parents[2] / "static" / "dashboard" / "dashboard.css"
TEXT_PAIRS = [
    ("ink", "bg"),
    ("ink", "panel"),
    ("muted", "bg"),
    ("muted", "panel"),
    ("link", "bg"),
    ("link", "panel"),
    ("danger", "bg"),
    ("danger", "panel"),
    ("calm-ink", "calm-bg"),
    ("unsettled-ink", "unsettled-bg"),
    ("upset-ink", "upset-bg"),
    ("unknown-ink", "unknown-bg"),
    ("alert-ink", "alert-bg"),
    ("accent-ink", "accent"),
]


def luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def themes() -> dict[str, dict[str, str]]:
    css = CSS.read_text()
    light, dark = css.split("@media (prefers-color-scheme: dark)", 1)
    variables = re.compile(r"--([a-z-]+):\s*(#[0-9a-fA-F]{6})")
    return {
        "light": dict(variables.findall(light.split("}", 1)[0])),
        "dark": dict(variables.findall(dark.split("}\n}", 1)[0])),
    }


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("text,background", TEXT_PAIRS)
def test_text_colours_meet_aa(theme, text, background):
    colours = themes()[theme]
    assert contrast(colours[text], colours[background]) >= 4.5


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_focus_ring_is_visible(theme):
    colours = themes()[theme]
    assert contrast(colours["focus"], colours["bg"]) >= 3
    assert contrast(colours["focus"], colours["panel"]) >= 3


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize(
    "colour",
    [
        charts.BLUE,
        charts.VERMILION,
        charts.GREEN,
        charts.PURPLE,
        charts.AMBER,
        charts.RED,
        charts.GREY,
    ],
)
def test_chart_marks_stand_out_on_both_pages(theme, colour):
    assert contrast(colour, themes()[theme]["bg"]) >= 3


def test_body_type_is_large():
    css = CSS.read_text()
    assert "html { font-size: 125%; }" in css  # 20px
    assert "html { font-size: 112.5%; }" in css  # 18px on narrow phones
