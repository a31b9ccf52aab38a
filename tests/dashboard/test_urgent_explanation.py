"""The alert says what decided it (issue 28): the reason, the language and the kind of words or
the nearest example, to everyone who sees the alert; the person's own words that decided it
only to members with the transcript right. The person page names the languages she speaks."""

from datetime import timedelta

from django.urls import reverse
from django.utils import timezone

from memory.models import Alert
from tests.dashboard.conftest import converse


def test_the_alert_says_why_and_shows_the_deciding_words_to_the_transcript_right(
    alice_client, bob_client, person
):
    url = reverse("dashboard:person_alerts", args=[person.id])

    as_admin = alice_client.get(url).content.decode()
    as_family = bob_client.get(url).content.decode()

    assert "Why: Recognised from words Clara knows for a fall. Said in English." in as_admin
    assert "The words that decided it: “i fell”." in as_admin
    assert "Why: Recognised from words Clara knows for a fall. Said in English." in as_family
    assert "decided it" not in as_family
    assert "can&#x27;t get up" not in as_family


def test_a_moment_in_another_language_says_which(alice_client, person):
    converse(
        person,
        timezone.now() - timedelta(minutes=30),
        [("Dzień dobry", 0.2, "calm"), ("Upadłam w łazience i nie mogę wstać", 0.9, "fearful")],
    )
    alert = Alert.objects.filter(person=person).order_by("-created_at").first()
    assert alert.detail["why"]["language"] == "pl"

    page = alice_client.get(reverse("dashboard:person_alerts", args=[person.id])).content.decode()
    assert "Said in Polish." in page

    overview = alice_client.get(reverse("dashboard:person", args=[person.id])).content.decode()
    assert "Talks with Clara in English and Polish lately" in overview


def test_an_english_only_person_page_says_nothing_about_languages(alice_client, person):
    page = alice_client.get(reverse("dashboard:person", args=[person.id])).content.decode()

    assert "Talks with Clara in" not in page
