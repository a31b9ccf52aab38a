"""Charts as pure functions: selector output in, a Plotly figure out (no database)."""

import json
import uuid
from datetime import date, datetime
from zoneinfo import ZoneInfo

from dashboard import charts
from dashboard.selectors import Calming, Day, Heatmap, HourCount, SessionQuestions, Timeline, Week

LONDON = ZoneInfo("Europe/London")


def _timeline(by_day, *, baseline=0.3, spread=0.1, escalations=()) -> Timeline:
    return Timeline(
        zone="Europe/London",
        days=30,
        by_day=by_day,
        baseline=baseline,
        spread=spread,
        escalations=list(escalations),
    )


def _at(day: int, hour: int) -> datetime:
    return datetime(2026, 3, day, hour, tzinfo=LONDON)


def _day(day: int, average: float, peak: float, hour: int = 18, emotion="anxious") -> Day:
    return Day(date(2026, 3, day), average, peak, _at(day, hour), emotion, 6)


def test_timeline_is_a_daily_line_with_each_days_peak_on_a_0_to_100_scale():
    figure = charts.timeline_figure(
        _timeline([_day(1, 0.2, 0.62), _day(2, 0.31, 0.9, hour=19, emotion="fearful")]),
        name="Peggy",
    )
    line, peaks = figure.data
    assert line.name == "day's average" and "lines" in line.mode
    assert list(line.y) == [20, 31]
    assert list(line.x) == ["2026-03-01 12:00", "2026-03-02 12:00"]
    assert peaks.name == "most upset moment"
    assert list(peaks.y) == [62, 90]  # the peak itself, not folded into the average
    assert list(peaks.x) == ["2026-03-01 18:00", "2026-03-02 19:00"]
    assert list(peaks.text) == ["anxious", "frightened"]
    assert line.marker.symbol != peaks.marker.symbol  # shape, not only colour


def test_timeline_legend_has_at_most_three_entries_so_it_fits_a_phone():
    figure = charts.timeline_figure(
        _timeline([_day(1, 0.2, 0.6)], escalations=[(_at(1, 20), "fall", 0.8)]), name="Peggy"
    )
    assert len(figure.data) == 3


def test_timeline_band_is_the_usual_range_and_the_title_says_so():
    figure = charts.timeline_figure(_timeline([], baseline=0.3, spread=0.1), name="Peggy")
    band = [shape for shape in figure.layout.shapes if shape.type == "rect"][0]
    assert (band.y0, band.y1) == (20, 40)
    assert figure.layout.title.text == (
        "How upset Peggy was each day (0–100), last 30 days (grey band: usual range)"
    )


def test_timeline_band_stays_within_0_and_100():
    figure = charts.timeline_figure(_timeline([], baseline=0.95, spread=0.2), name="Peggy")
    band = [shape for shape in figure.layout.shapes if shape.type == "rect"][0]
    assert (band.y0, band.y1) == (75, 100)


def test_timeline_without_a_baseline_has_no_band():
    figure = charts.timeline_figure(_timeline([], baseline=None, spread=None), name="Peggy")
    assert not figure.layout.shapes
    assert "band" not in figure.layout.title.text


def test_escalations_are_stars_at_their_real_level():
    figure = charts.timeline_figure(
        _timeline([], escalations=[(_at(3, 20), "fall", 0.72), (_at(4, 9), None, None)]),
        name="Peggy",
    )
    (stars,) = [trace for trace in figure.data if trace.name == "needed a person"]
    assert list(stars.y) == [72, 100]  # the top only when no reading is known
    assert stars.marker.symbol == "star"
    assert list(stars.text) == ["may have fallen", "needed help"]


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
    assert heat.x[0] == 9 and heat.x[-1] == 19  # only the hours with readings, in a run
    # A label every 3 hours: every hour's label collides on a phone ("8am10amnoon...").
    assert list(figure.layout.xaxis.tickvals) == [9, 12, 15, 18]
    assert list(figure.layout.xaxis.ticktext) == ["9am", "noon", "3pm", "6pm"]
    assert list(heat.customdata[0][0]) == [3, "9am"]  # readings and hour, for the hover
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


def test_calming_chart_ranks_only_what_was_measured_often_enough():
    kinds = [
        Calming("stories from the past", "reminiscence", 10, 8, -0.15),
        Calming("calming stories", "calming_story", 6, 6, 0.05),
        Calming("a gentle change of subject", "gentle_redirect", 3, 2, -0.4),
        Calming("kind answers", "memory_loop", 1, 0, None),
    ]
    (bars,) = charts.calming_figure(kinds, name="Peggy", conversations=30).data
    # 2 measurements (even a big fall) is "not enough yet": no bar.
    assert list(bars.x) == [15, -5]
    assert list(bars.customdata) == [8, 6]
    assert bars.y[0] == "stories from the<br>past (8×)"  # wrapped for a phone, with its count
    assert bars.marker.color[0] != bars.marker.color[1]  # helped vs did not


def test_calming_needs_enough_measurements_to_rank():
    assert Calming("a", "x", 9, 5, -0.1).enough
    assert not Calming("a", "x", 9, 4, -0.1).enough
    assert not Calming("a", "x", 9, 9, None).enough


def test_figures_use_no_plotly_template_and_json_is_safe_in_a_script_tag():
    figure = charts.weekly_figure([Week(date(2026, 3, 2), 0.2, 1, 1)], name="</script><b>")
    text = charts.to_json(figure)
    assert "</script>" not in text and "<b>" not in text
    # template="none": no colours, fonts or backgrounds of Plotly's default (~6.5 KB a figure).
    assert "layout" not in json.loads(text)["layout"]["template"]
    assert len(text) < 2000
