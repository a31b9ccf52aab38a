import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from memory.admin import SESSION_PAGE_MESSAGES
from memory.conversations import services
from memory.conversations.emotion import EmotionReading
from memory.models import (
    ApiKey,
    ChatMessage,
    DetectedEmotion,
    NarrativeUsage,
    Person,
    RepetitionRecord,
    Session,
)

ALL_MODELS = [
    Person,
    Session,
    ChatMessage,
    DetectedEmotion,
    RepetitionRecord,
    NarrativeUsage,
    ApiKey,
]
APPEND_ONLY = [ChatMessage, DetectedEmotion, RepetitionRecord, NarrativeUsage]
START = datetime(2025, 3, 3, 9, 0, tzinfo=UTC)


def _url(model, view, *args):
    return reverse(f"admin:memory_{model._meta.model_name}_{view}", args=args)


def _talk(*, name="Nana", exchanges=3, close=True, start=START) -> Session:
    """One person's session through the services, with an emotion, a repeat and a story."""
    session, _ = services.session_resolve(
        session_id=uuid.uuid4(), user_id=uuid.uuid4(), display_name=name, at=start
    )
    for i in range(exchanges):
        services.exchange_record(
            session_id=session.id,
            user_message="Where am I?" if i % 2 else "When is Sarah coming?",
            assistant_message="You're safe at home, and Sarah is coming on Sunday.",
            emotion=EmotionReading("anxious", 0.8, 0.6, "stable") if i == 0 else None,
            intent="orientation",
            narrative=services.NarrativeRef("garden-walk-01", "seed", "calming_story")
            if i == 1
            else None,
            at=start + timedelta(minutes=i),
        )
    if close:
        services.session_close(session_id=session.id, at=start + timedelta(minutes=exchanges))
    return session


@pytest.fixture
def data(db):
    _talk()
    services.api_key_create(name="bot")
    return None


@pytest.mark.parametrize("model", ALL_MODELS, ids=lambda m: m.__name__)
def test_changelist_and_object_page_open(admin_client, data, model):
    response = admin_client.get(_url(model, "changelist"))
    assert response.status_code == 200
    assert response.context["cl"].result_count >= 1
    obj = model.objects.first()
    response = admin_client.get(_url(model, "change", obj.pk))
    assert response.status_code == 200


def test_searches_and_history_links_work(admin_client, data):
    session = Session.objects.get()
    person = session.person
    for model, params in [
        (Session, {"q": str(session.id)}),
        # Names are sealed: found by the exact name (memory/admin/base.py), never a substring.
        (Session, {"q": "Nana"}),
        (Person, {"q": str(person.id)}),
        (ChatMessage, {"q": str(session.id)}),
        (ChatMessage, {"session": str(session.id)}),
        (ChatMessage, {"person": str(person.id)}),
        (DetectedEmotion, {"session": str(session.id)}),
        (RepetitionRecord, {"repeated": "yes"}),
        (NarrativeUsage, {"q": "garden"}),
        (ApiKey, {"state": "live"}),
    ]:
        response = admin_client.get(_url(model, "changelist"), params)
        assert response.status_code == 200, (model, params)
        assert response.context["cl"].result_count >= 1, (model, params)


@pytest.mark.parametrize("model", APPEND_ONLY, ids=lambda m: m.__name__)
def test_append_only_tables_refuse_add_change_delete(admin_client, data, model):
    obj = model.objects.first()
    before = list(model.objects.order_by("pk").values())

    assert admin_client.get(_url(model, "add")).status_code == 403
    assert admin_client.post(_url(model, "add"), {}).status_code == 403
    # The change page is a view page: it opens, but a POST changes nothing.
    page = admin_client.get(_url(model, "change", obj.pk))
    assert page.status_code == 200
    assert not page.context["has_change_permission"]
    response = admin_client.post(
        _url(model, "change", obj.pk),
        {"content": "tampered", "emotion": "calm", "repeat_count": 99, "narrative_id": "x"},
    )
    assert response.status_code == 403
    assert admin_client.get(_url(model, "delete", obj.pk)).status_code == 403
    assert admin_client.post(_url(model, "delete", obj.pk), {"post": "yes"}).status_code == 403
    # Nor is there a bulk delete on the list page.
    admin_client.post(
        _url(model, "changelist"),
        {"action": "delete_selected", "_selected_action": [obj.pk], "post": "yes"},
    )
    assert list(model.objects.order_by("pk").values()) == before


@pytest.mark.parametrize("model", [Person, Session, ApiKey], ids=lambda m: m.__name__)
def test_people_sessions_and_keys_are_never_deleted_or_added_here(admin_client, data, model):
    obj = model.objects.first()
    assert admin_client.get(_url(model, "add")).status_code == 403
    assert admin_client.post(_url(model, "delete", obj.pk), {"post": "yes"}).status_code == 403
    admin_client.post(
        _url(model, "changelist"),
        {"action": "delete_selected", "_selected_action": [obj.pk], "post": "yes"},
    )
    assert model.objects.filter(pk=obj.pk).exists()


def test_operator_edits_a_person(admin_client, data):
    person = Person.objects.get()
    response = admin_client.post(
        _url(Person, "change", person.pk),
        {
            "display_name": "Grandma Peggy",
            "status": "inactive",
            "caregiver_context": '{"preferredName": "Peggy", "avoidTopics": ["hospitals"]}',
        },
    )
    assert response.status_code == 302, response.context and response.context["errors"]
    person.refresh_from_db()
    assert person.display_name == "Grandma Peggy"
    assert person.status == "inactive"
    assert person.caregiver_context == {"preferredName": "Peggy", "avoidTopics": ["hospitals"]}


def test_the_admins_history_never_names_the_person(admin_client, data):
    # django_admin_log is plaintext: an edit of a person is logged by kind and id, never by name
    # (invariant 7); the history page still lists it, linked to the person.
    from django.contrib.admin.models import LogEntry

    person = Person.objects.get()
    admin_client.post(
        _url(Person, "change", person.pk),
        {"display_name": "Grandma Peggy", "status": "active", "caregiver_context": "{}"},
    )
    entry = LogEntry.objects.get()
    assert entry.object_repr == f"person {person.pk}"
    assert entry.object_id == str(person.pk) and entry.get_admin_url() == _url(
        Person, "change", person.pk
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT object_repr, change_message FROM django_admin_log")
        assert "Peggy" not in repr(cursor.fetchall())
    history = admin_client.get(_url(Person, "history", person.pk)).content.decode()
    assert "Grandma Peggy" not in history.split("<table")[-1] and "Changed" in history


def test_session_page_shows_the_latest_messages_read_only(admin_client, db):
    session = _talk(exchanges=30)  # 60 messages
    response = admin_client.get(_url(Session, "change", session.pk))
    assert response.status_code == 200
    (inline,) = response.context["inline_admin_formsets"]
    shown = [form.instance.sequence_number for form in inline.formset.forms]
    assert shown == list(range(60 - SESSION_PAGE_MESSAGES + 1, 61))
    assert not inline.has_change_permission and not inline.has_add_permission
    assert "You&#x27;re safe at home" in response.content.decode()


def test_close_sessions_action_uses_the_service(admin_client, db):
    open_session = _talk(close=False)
    response = admin_client.post(
        _url(Session, "changelist"),
        {"action": "close_sessions", "_selected_action": [open_session.pk]},
    )
    assert response.status_code == 302
    open_session.refresh_from_db()
    assert open_session.status == Session.Status.CLOSED
    assert open_session.session_summary["message_count"] == 6


def test_api_key_hash_is_never_shown_and_revoke_action_revokes(admin_client, db):
    live, _ = services.api_key_create(name="production bot")
    other, _ = services.api_key_create(name="staging bot")
    for url in (_url(ApiKey, "changelist"), _url(ApiKey, "change", live.pk)):
        page = admin_client.get(url).content.decode()
        assert live.prefix in page
        assert live.key_hash not in page and "key_hash" not in page

    response = admin_client.post(
        _url(ApiKey, "changelist"), {"action": "revoke_keys", "_selected_action": [live.pk]}
    )
    assert response.status_code == 302
    live.refresh_from_db()
    other.refresh_from_db()
    assert live.revoked_at is not None
    assert other.revoked_at is None


def _queries(client, url) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


@pytest.mark.parametrize("model", ALL_MODELS, ids=lambda m: m.__name__)
def test_changelist_queries_do_not_grow_with_rows(
    admin_client, data, model, django_assert_max_num_queries
):
    few = _queries(admin_client, _url(model, "changelist"))
    for n in range(6):
        _talk(name=f"Person {n}", exchanges=4, start=START + timedelta(days=n))
        services.api_key_create(name=f"bot {n}")
    with django_assert_max_num_queries(few):
        response = admin_client.get(_url(model, "changelist"))
    assert response.context["cl"].result_count > 6


def test_session_page_queries_do_not_grow_with_messages(
    admin_client, db, django_assert_max_num_queries
):
    short = _talk(exchanges=2)
    few = _queries(admin_client, _url(Session, "change", short.pk))
    long = _talk(exchanges=40)
    with django_assert_max_num_queries(few):
        admin_client.get(_url(Session, "change", long.pk))
