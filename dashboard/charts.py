"""Pure functions: selector output in, a Plotly figure out. No database, no request.

One house layout (no Plotly template: the default one adds ~6.5 KB a figure), large type, and
colours that keep at least 3:1 contrast on both the light and the dark page (WCAG 1.4.11 for
graphics), with a different marker shape per series so colour is never the only cue. Every
title says what the chart shows. x values are ISO strings: Plotly validates datetimes slowly.
static/dashboard/charts.js renders them and adapts text colours to the page's theme.
"""

from collections.abc import Sequence

import plotly.graph_objects as go

from dashboard import words
from dashboard.selectors import (
    Calming,
    Heatmap,
    HourCount,
    SessionQuestions,
    Timeline,
    Week,
)
from memory.models import QuestionType

BLUE = "#1A73E8"
VERMILION = "#D55E00"
GREEN = "#009E73"
PURPLE = "#8E6BBF"
AMBER = "#A26900"
RED = "#C0392B"
GREY = "#767676"

QUESTION_COLOURS = {
    QuestionType.LOCATION: BLUE,
    QuestionType.TIME: AMBER,
    QuestionType.IDENTITY: PURPLE,
    QuestionType.ACTIVITY: GREEN,
    QuestionType.PERSON: VERMILION,
}
WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
# Light to dark with distress: the colour carries "how upset" on either page theme.
UPSET_SCALE = [[0.0, "#DCEBFA"], [0.35, "#F6D58E"], [0.65, "#E0772B"], [1.0, "#8E1B0B"]]


def _layout(title: str, **extra) -> dict:
    layout = {
        "template": "none",
        "title": {"text": title, "x": 0, "xanchor": "left", "font": {"size": 18}},
        "font": {"size": 15, "family": "system-ui, sans-serif"},
        "margin": {"l": 56, "r": 16, "t": 64, "b": 56},
        "height": 340,
        "legend": {"orientation": "h", "y": -0.22, "x": 0},
        "hoverlabel": {"font": {"size": 16}},
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
    }
    for axis in ("xaxis", "yaxis"):
        extra[axis] = {"automargin": True, **extra.get(axis, {})}
    layout.update(extra)
    return layout


def _hour_label(hour: int) -> str:
    if hour == 0:
        return "midnight"
    if hour == 12:
        return "noon"
    return f"{hour % 12}{'am' if hour < 12 else 'pm'}"


def _wrap(label: str, width: int = 16) -> str:
    """A long category label on several lines (<br>), so a phone shows it whole."""
    lines: list[str] = []
    for word in label.split():
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "<br>".join(lines)


def timeline_figure(timeline: Timeline, *, name: str) -> go.Figure:
    """Each day's average as a line over the usual range, each day's most upset moment as a
    marker (so a bad hour is never averaged away), and stars where a person was needed, at the
    level of the reading that raised them. Three legend entries: it fits a phone."""
    days = timeline.by_day
    traces = []
    if days:
        traces.append(
            go.Scatter(
                x=[f"{d.day.isoformat()} 12:00" for d in days],  # midday: the day's middle
                y=[round(d.average * 100) for d in days],
                mode="lines+markers",
                name="day's average",
                line={"color": BLUE, "width": 2.5},
                marker={"color": BLUE, "size": 5},
                customdata=[d.readings for d in days],
                hovertemplate="%{x|%a %-d %b}: %{y} of 100 on average "
                "(%{customdata} readings)<extra></extra>",
            )
        )
        traces.append(
            go.Scatter(
                x=[d.peak_at.strftime("%Y-%m-%d %H:%M") for d in days],
                y=[round(d.peak * 100) for d in days],
                mode="markers",
                name="most upset moment",
                marker={
                    "color": VERMILION,
                    "symbol": "triangle-up",
                    "size": 9,
                    "line": {"width": 1},
                },
                text=[words.feeling(d.peak_emotion) for d in days],
                hovertemplate="%{x|%a %-d %b %H:%M}: %{y} of 100, %{text}<extra></extra>",
            )
        )
    if timeline.escalations:
        traces.append(
            go.Scatter(
                x=[at.strftime("%Y-%m-%d %H:%M") for at, *_ in timeline.escalations],
                # At the level of the reading that raised it; the top only if none is known.
                y=[100 if d is None else round(d * 100) for *_, d in timeline.escalations],
                mode="markers",
                name="needed a person",
                marker={"color": RED, "symbol": "star", "size": 16, "line": {"width": 1}},
                text=[
                    words.ESCALATION_REASONS.get(r or "", "needed help")
                    for _, r, _ in timeline.escalations
                ],
                hovertemplate="%{x|%a %-d %b %H:%M}: needed a person, %{text}<extra></extra>",
            )
        )
    shapes = []
    band = timeline.band
    if band is not None:
        low, high = band
        shapes.append(
            {
                "type": "rect",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "y0": round(low * 100),
                "y1": round(high * 100),
                "fillcolor": GREY,
                "opacity": 0.18,
                "line": {"width": 0},
                "layer": "below",
            }
        )
        shapes.append(
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "y0": round(timeline.baseline * 100),
                "y1": round(timeline.baseline * 100),
                "line": {"color": GREY, "width": 2, "dash": "dash"},
                "layer": "below",
            }
        )
    title = f"How upset {name} was each day (0–100), last {timeline.days} days"
    if band is not None:
        title += " (grey band: usual range)"
    return go.Figure(
        data=traces,
        layout=_layout(
            title,
            shapes=shapes,
            yaxis={"title": {"text": "how upset (0–100)"}, "range": [-3, 105], "fixedrange": True},
            xaxis={"type": "date", "tickformat": "%-d %b", "nticks": 6},
        ),
    )


def heatmap_figure(heatmap: Heatmap, *, name: str) -> go.Figure:
    """Average distress by weekday and hour of day: late-day upset (sundowning) shows as a band.

    Hours are numbers on the axis with a label every 3 hours (every hour's label collides on a
    phone); each square's hover names its hour.
    """
    hours = [h for h in range(24) if any(heatmap.readings[d][h] for d in range(7))]
    if hours:
        hours = list(range(min(hours), max(hours) + 1))
    z = [
        [
            None if heatmap.averages[d][h] is None else round(heatmap.averages[d][h] * 100)
            for h in hours
        ]
        for d in range(7)
    ]
    hover = [[[heatmap.readings[d][h], _hour_label(h)] for h in hours] for d in range(7)]
    ticks = [h for h in hours if h % 3 == 0] or hours[:1]
    figure = go.Figure(
        data=[
            go.Heatmap(
                x=hours,
                y=WEEKDAYS,
                z=z,
                customdata=hover,
                zmin=0,
                zmax=100,
                colorscale=UPSET_SCALE,
                xgap=2,
                ygap=2,
                colorbar={"title": {"text": "how<br>upset"}, "thickness": 12},
                hovertemplate="%{y} %{customdata[1]}: %{z} of 100 "
                "(%{customdata[0]} readings)<extra></extra>",
            )
        ],
        layout=_layout(
            f"When {name} is most upset: day of week and hour, last {heatmap.days} days",
            yaxis={"autorange": "reversed", "fixedrange": True},
            xaxis={
                "fixedrange": True,
                "tickangle": 0,
                "tickmode": "array",
                "tickvals": ticks,
                "ticktext": [_hour_label(h) for h in ticks],
            },
            height=380,
        ),
    )
    return figure


def weekly_figure(weeks: Sequence[Week], *, name: str) -> go.Figure:
    """Average distress per week, with the number of conversations in each bar's label."""
    return go.Figure(
        data=[
            go.Bar(
                x=[week.start.strftime("%-d %b") for week in weeks],
                y=[None if w.average is None else round(w.average * 100) for w in weeks],
                marker={"color": BLUE},
                customdata=[week.conversations for week in weeks],
                hovertemplate=(
                    "Week of %{x}: %{y} of 100 on average<br>%{customdata} conversations"
                    "<extra></extra>"
                ),
                name="average",
            )
        ],
        layout=_layout(
            f"How upset {name} was on average, week by week (0–100)",
            yaxis={"range": [0, 100], "fixedrange": True},
            xaxis={"type": "category", "fixedrange": True},
            showlegend=False,
            height=300,
        ),
    )


def questions_per_session_figure(sessions: Sequence[SessionQuestions], *, name: str) -> go.Figure:
    """Questions in each recent conversation, stacked by kind ("Where am I?", ...)."""
    labels = [s.started.strftime("%a %-d %b %H:%M") for s in sessions]
    traces = [
        go.Bar(
            x=labels,
            y=[s.by_type.get(qtype, 0) for s in sessions],
            name=words.question_label(qtype),
            marker={"color": colour},
            hovertemplate="%{x}<br>%{fullData.name}: %{y}<extra></extra>",
        )
        for qtype, colour in QUESTION_COLOURS.items()
        if any(s.by_type.get(qtype) for s in sessions)
    ]
    return go.Figure(
        data=traces,
        layout=_layout(
            f"Questions {name} asked in each of the last {len(sessions)} conversations, by kind",
            barmode="stack",
            xaxis={
                "type": "category",
                "showticklabels": False,
                "title": {"text": "oldest → newest"},
            },
            yaxis={"title": {"text": "questions"}, "fixedrange": True},
        ),
    )


def questions_by_hour_figure(hours: Sequence[HourCount], *, name: str, days: int) -> go.Figure:
    """Questions by hour of the day, and how many of them repeated an earlier one."""
    labels = [_hour_label(h.hour) for h in hours]
    return go.Figure(
        data=[
            go.Bar(
                x=labels,
                y=[h.asked - h.repeats for h in hours],
                name="first time asked",
                marker={"color": BLUE},
            ),
            go.Bar(
                x=labels,
                y=[h.repeats for h in hours],
                name="asked again",
                marker={"color": VERMILION},
            ),
        ],
        layout=_layout(
            f"When {name} asks questions: by hour of day, last {days} days",
            barmode="stack",
            xaxis={"type": "category", "fixedrange": True},
            yaxis={"title": {"text": "questions"}, "fixedrange": True},
        ),
    )


def calming_figure(kinds: Sequence[Calming], *, name: str, conversations: int) -> go.Figure:
    """Points of distress (of 100) that fell after each kind of reply measured often enough to
    rank; each label says how many times it was measured, and labels wrap to fit a phone."""
    measured = [k for k in kinds if k.enough]
    return go.Figure(
        data=[
            go.Bar(
                x=[k.drop for k in measured],
                y=[_wrap(f"{k.name} ({k.measured}×)") for k in measured],
                orientation="h",
                marker={"color": [GREEN if k.drop > 0 else GREY for k in measured]},
                customdata=[k.measured for k in measured],
                hovertemplate="%{x} points of 100 calmer on average, "
                "measured %{customdata} times<extra></extra>",
            )
        ],
        layout=_layout(
            f"How much calmer {name} was after each thing Clara tried "
            f"(points of 100, last {conversations} conversations)",
            yaxis={"autorange": "reversed", "automargin": True, "fixedrange": True},
            xaxis={
                "title": {"text": "points calmer (of 100)"},
                "zeroline": True,
                "fixedrange": True,
            },
            showlegend=False,
            height=120 + 56 * max(len(measured), 1),
        ),
    )


def to_json(figure: go.Figure) -> str:
    """The figure as JSON safe inside <script type="application/json"> (plotly escapes <, >, /)."""
    return figure.to_json()
