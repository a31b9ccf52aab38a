"""Plain words: no codes, no raw figures."""

from datetime import UTC, datetime

import time_machine
from django.utils import timezone

from dashboard import words
from dashboard.templatetags.dashboard_tags import options, when


def test_times_says_once_twice_and_about_for_averages():
    assert [words.times(n) for n in (1, 2, 8, 1.5, 7.6, 0.4)] == [
        "once",
        "twice",
        "8 times",
        "about twice",
        "about 8 times",
        "about once",
    ]


def test_upset_levels_in_words():
    assert [words.upset_words(d) for d in (None, 0.1, 0.3, 0.5, 0.7, 0.95, 1.0)] == [
        "not known",
        "calm",
        "a little unsettled",
        "unsettled",
        "upset",
        "very upset",
        "very upset",
    ]


def test_questions_follow_the_persons_pronoun():
    assert words.question_phrase("location", "she") == "where she is"
    assert words.question_phrase("location", "they") == "where they are"
    assert words.pronoun({"pronouns": "he/him"}) == "he"
    assert words.pronoun({"pronouns": "xe/xem"}) == "they"


def test_alert_headlines_have_no_codes():
    assert words.alert_headline("escalation", {"reason": "fall"}) == (
        "Clara flagged a moment that needed a person: may have fallen."
    )
    assert words.alert_headline(
        "distress_above_baseline", {"session_average": 0.71, "baseline": 0.3}
    ) == ("More upset than usual in one conversation (71 out of 100; usually 30).")
    assert "_" not in words.alert_headline("chronic_repetition", {})


@time_machine.travel(datetime(2026, 3, 12, 20, 0, tzinfo=UTC), tick=False)
def test_when_is_relative_in_the_active_time_zone():
    with timezone.override("America/New_York"):  # 16:00 on Thursday 12 March there
        assert when(datetime(2026, 3, 12, 19, 30, tzinfo=UTC)) == "today at 15:30"
        assert when(datetime(2026, 3, 12, 3, 0, tzinfo=UTC)) == "yesterday at 23:00"
        assert when(datetime(2026, 3, 9, 23, 0, tzinfo=UTC)) == "Monday at 19:00"
        assert when(datetime(2026, 2, 1, 12, 0, tzinfo=UTC)) == "1 February at 07:00"
        assert when(datetime(2025, 12, 1, 12, 0, tzinfo=UTC)) == "1 December 2025 at 07:00"
        assert when(None) == ""


def test_a_stretch_of_days_says_its_unit_and_its_conversations():
    from dashboard.selectors import Stretch

    assert words.stretch_sentence(Stretch(0.31, 12, 3), label="The last 7 days") == (
        "The last 7 days: a little unsettled on average (31 out of 100), 3 conversations."
    )
    assert words.stretch_sentence(Stretch(None, 0, 0), label="The 7 days before") == (
        "The 7 days before: no conversations."
    )


def test_options_are_escaped_and_the_chosen_one_selected():
    written = options([("a1", 'Zoë <b>"Bee"</b> & Co'), ("b2", "Arthur")], "b2")
    assert written == (
        '<option value="a1">Zoë &lt;b&gt;&quot;Bee&quot;&lt;/b&gt; &amp; Co</option>'
        '<option value="b2" selected>Arthur</option>'
    )
