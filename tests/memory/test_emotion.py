"""The built-in emotion reader: emotion, distress in 0-1, and trajectory against recent history."""

import pytest

from memory.conversations.emotion import analyse, trajectory_for
from memory.models import Emotion, Trajectory

FEARFUL = "I'm so scared, please help me!"
ANXIOUS_LINE = "I'm worried about the children"
CALM = "Thank you, that's lovely"


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (FEARFUL, "fearful"),
        ("I'm worried, I need to go home", "anxious"),
        ("I don't understand, where am I?", "confused"),
        ("I don\u2019t understand", "confused"),
        ("My husband passed away and I'm so sad", "sad"),
        ("I feel so lonely here by myself", "lonely"),
        (CALM, "calm"),
        ("I like tea", "neutral"),
    ],
)
def test_analyse_reads_the_emotion_of_the_cue_words(message, expected):
    assert analyse(message).emotion == expected


@pytest.mark.parametrize("calm", [CALM, "I like tea", "That sounds good, I'm happy"])
@pytest.mark.parametrize("fearful", [FEARFUL, "I'm terrified", "Someone is in my room"])
def test_fearful_message_scores_higher_distress_than_a_calm_one(fearful, calm):
    assert analyse(fearful).distress_score > analyse(calm).distress_score


def test_exclamations_raise_the_distress_of_a_distressed_message():
    assert analyse("I'm scared!!").distress_score > analyse("I'm scared").distress_score


def test_distress_carries_over_from_an_upset_conversation():
    assert analyse(CALM, [0.9, 0.9, 0.9]).distress_score > analyse(CALM).distress_score


MESSAGES = [FEARFUL, "I'M TERRIFIED!!! HELP ME!!! SOMEONE IS HERE!!!", CALM, "", "ok", "x" * 8000]
HISTORIES = [[], [0.0], [1.0, 1.0, 1.0], [0.0, 1.0, 0.5, 0.2]]


@pytest.mark.parametrize("history", HISTORIES)
@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: m[:20])
def test_analyse_values_stay_in_range(message, history):
    result = analyse(message, history)
    assert 0.0 <= result.distress_score <= 1.0
    assert 0.0 <= result.confidence <= 1.0
    assert result.emotion in Emotion.values
    assert result.trajectory in Trajectory.values


def test_trajectory_without_history_is_stable():
    assert trajectory_for(0.9, []) == "stable"


@pytest.mark.parametrize(
    ("distress", "history", "expected"),
    [
        (0.8, [0.2, 0.3, 0.2], "escalating"),
        (0.1, [0.8, 0.9, 0.8], "de-escalating"),
        (0.5, [0.5, 0.45, 0.55], "stable"),
        (0.55, [0.5, 0.5, 0.5], "stable"),
    ],
    ids=["rising", "falling", "same", "small rise"],
)
def test_trajectory_compares_distress_with_recent_history(distress, history, expected):
    assert trajectory_for(distress, history) == expected


def test_fearful_message_after_a_calm_conversation_is_escalating():
    assert analyse(FEARFUL, [0.05, 0.05, 0.05]).trajectory == "escalating"


def test_calm_message_after_a_distressed_conversation_is_de_escalating():
    assert analyse(CALM, [0.9, 0.9, 0.9]).trajectory == "de-escalating"


def test_message_at_the_same_level_as_the_conversation_is_stable():
    level = analyse("I like tea").distress_score
    assert analyse("I like tea", [level, level, level]).trajectory == "stable"


# --- The person's own baseline (issue 17) -------------------------------------------------------


def test_someone_usually_anxious_is_not_escalating_when_a_session_starts_calm_then_anxious():
    # A calm hello, then the worry they nearly always have: back to their usual, not rising.
    assert analyse(ANXIOUS_LINE, [0.2]).trajectory == "escalating"  # no baseline: rising
    assert analyse(ANXIOUS_LINE, [0.2], baseline=0.7).trajectory == "stable"


def test_someone_usually_calm_is_escalating_when_a_session_starts_frightened():
    assert analyse(FEARFUL, [], baseline=0.1).trajectory == "escalating"
    assert analyse(FEARFUL, [], baseline=0.85).trajectory == "stable"


def test_the_baseline_only_fills_in_for_readings_the_session_does_not_have_yet():
    assert trajectory_for(0.8, [0.2, 0.2, 0.2], baseline=0.8) == "escalating"
    assert trajectory_for(0.8, [0.2, 0.2], baseline=0.8) == "escalating"  # (0.8+0.2+0.2)/3
    assert trajectory_for(0.6, [0.2], baseline=0.8) == "stable"  # (0.8+0.8+0.2)/3 = 0.6
