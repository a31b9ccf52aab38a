"""Charts as pure functions: selector output in, a Plotly figure out (no database)."""

import json
import uuid
from datetime import date, datetime
from zoneinfo import ZoneInfo

from dashboard import charts
from dashboard.selectors import Calming, Heatmap, HourCount, SessionQuestions, Timeline, Week

LONDON = ZoneInfo("Europe/London")


def _timeline(points, *, baseline=0.3, spread=0.1, escalations=()) -> Timeline:
    return Timeline(
        zone="Europe/London",
        days=30,
        points=points,
        baseline=baseline,
        spread=spread,
        escalations=list(escalations),
    )


def _at(day: int, hour: int) -> datetime:
    return datetime(2026, 3, day, hour, tzinfo=LONDON)


def test_timeline_has_one_trace_per_feeling_on_a_0_to_100_scale():
    sid = uuid.uuid4()
    figure = charts.timeline_figure(
        _timeline(
            [
                (_at(1, 9), 0.1, "calm", sid),
                (_at(1, 18), 0.62, "anxious", sid),
                (_at(2, 19), 0.7, "anxious", sid),
            ]
        ),
        name="Peggy",
    )
    by_name = {trace.name: trace for trace in figure.data}
    assert set(by_name) == {"calm", "anxious"}
    assert list(by_name["anxious"].y) == [62, 70]
    assert list(by_name["anxious"].x) == ["2026-03-01 18:00", "2026-03-02 19:00"]
    assert by_name["calm"].marker.symbol != by_name["anxious"].marker.symbol


def test_timeline_band_is_the_usual_range_and_the_title_says_so():
    figure = charts.timeline_figure(_timeline([], baseline=0.3, spread=0.1), name="Peggy")
    band = [shape for shape in figure.layout.shapes if shape.type == "rect"][0]
    assert (band.y0, band.y1) == (20, 40)
    assert figure.layout.title.text == (
        "How upset Peggy was at each message, last 30 days (grey band: usual range)"
    )


def test_timeline_band_stays_within_0_and_100():
    figure = charts.timeline_figure(_timeline([], baseline=0.95, spread=0.2), name="Peggy")
    band = [shape for shape in figure.layout.shapes if shape.type == "rect"][0]
    assert (band.y0, band.y1) == (75, 100)


def test_timeline_without_a_baseline_has_no_band():
    figure = charts.timeline_figure(_timeline([], baseline=None, spread=None), name="Peggy")
    assert not figure.layout.shapes
    assert "band" not in figure.layout.title.text


def test_escalations_are_stars_at_the_top():
    figure = charts.timeline_figure(_timeline([], escalations=[(_at(3, 20), "fall")]), name="Peggy")
    (stars,) = [trace for trace in figure.data if trace.name == "needed a person"]
    assert list(stars.y) == [100]
    assert stars.marker.symbol == "star"
    assert list(stars.text) == ["may have fallen"]


def test_heatmap_rows_are_weekdays_and_empty_hours_stay_empty():
    averages = [[None] * 24 for _ in range(7)]
    readings = [[0] * 24 for _ in range(7)]
    averages[0][9], readings[0][9] = 0.2, 3  # Monday 9am
    averages[6][19], readings[6][19] = 0.8, 5  # Sunday 7pm
    figure = charts.heatmap_figure(
        Heatmap(zone="UTC", days=90, averages=averages, readings=readings), name="Peggy"
    )
    (heat,) = figure.data
    assert list(heat.y) == ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    assert heat.x[0] == "9am" and heat.x[-1] == "7pm"  # only the hours with readings, in a run
    assert heat.z[0][0] == 20 and heat.z[6][-1] == 80
    assert heat.z[3][0] is None
    assert (heat.zmin, heat.zmax) == (0, 100)  # the same colours mean the same on every page
    assert "day of week and hour" in figure.layout.title.text


def test_weekly_chart_shows_averages_and_keeps_empty_weeks_empty():
    weeks = [Week(date(2026, 3, 2), 0.25, 10, 3), Week(date(2026, 3, 9), None, 0, 0)]
    (bars,) = charts.weekly_figure(weeks, name="Peggy").data
    assert list(bars.x) == ["2 Mar", "9 Mar"]
    assert list(bars.y) == [25, None]
    assert list(bars.customdata) == [3, 0]


def test_questions_per_session_stack_by_kind_in_plain_labels():
    sessions = [
        SessionQuestions(uuid.uuid4(), _at(1, 9), {"location": 3}),
        SessionQuestions(uuid.uuid4(), _at(1, 19), {"location": 1, "time": 2}),
    ]
    figure = charts.questions_per_session_figure(sessions, name="Peggy")
    by_name = {trace.name: list(trace.y) for trace in figure.data}
    assert by_name == {"Where am I?": [3, 1], "What day or time is it?": [0, 2]}
    assert figure.layout.barmode == "stack"


def test_questions_by_hour_splits_first_askings_from_repeats():
    figure = charts.questions_by_hour_figure(
        [HourCount(9, 4, 1), HourCount(19, 10, 7)], name="Peggy", days=30
    )
    first, again = figure.data
    assert list(first.x) == ["9am", "7pm"]
    assert list(first.y) == [3, 3] and list(again.y) == [1, 7]


def test_calming_chart_shows_points_calmer_and_leaves_out_unmeasured():
    kinds = [
        Calming("stories from the past", "reminiscence", 10, 8, -0.15),
        Calming("calming stories", "calming_story", 4, 4, 0.05),
        Calming("a gentle change of subject", "gentle_redirect", 1, 0, None),
    ]
    (bars,) = charts.calming_figure(kinds, name="Peggy", conversations=30).data
    assert list(bars.y) == ["stories from the past", "calming stories"]
    assert list(bars.x) == [15, -5]
    assert bars.marker.color[0] != bars.marker.color[1]  # helped vs did not


def test_figures_use_no_plotly_template_and_json_is_safe_in_a_script_tag():
    figure = charts.weekly_figure([Week(date(2026, 3, 2), 0.2, 1, 1)], name="</script><b>")
    text = charts.to_json(figure)
    assert "</script>" not in text and "<b>" not in text
    # template="none": no colours, fonts or backgrounds of Plotly's default (~6.5 KB a figure).
    assert "layout" not in json.loads(text)["layout"]["template"]
    assert len(text) < 2000
