"""Personal text at rest, round three (issue 30, step 5).

Stories about a person are encrypted and bound to their row; repetition fingerprints are keyed
per person (equal words of two people differ, one person's repeat checks work as before); the
bot's idempotency key is stored as a keyed digest (a retry still finds its exchange); narrative
ids are made by code and another organisation's id is answered as an unknown one.
"""

import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from dashboard import selectors as dashboard_selectors
from memory.companion import narratives
from memory.conversations import repetition, selectors, services
from memory.core import crypto
from memory.models import ChatMessage, Narrative, Person, RepetitionRecord

pytestmark = pytest.mark.django_db

QUESTION = "I want my blue cardigan"
SECRET_KEY_TEXT = "bot-turn-Quillfeather-4471"


def _person(name: str) -> Person:
    now = timezone.now()
    return Person.objects.create(display_name=name, created_at=now, last_active_at=now)


def _talk(session_id, message, *, at=None, key=None):
    return services.exchange_record(
        session_id=session_id,
        user_message=message,
        assistant_message="It is safe in your wardrobe, dear.",
        idempotency_key=key,
        at=at,
    )


def _raw(table: str, column: str, where: str = "", params=()) -> list:
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {quote(column)} FROM {quote(table)} {where}",  # noqa: S608 - test names
            list(params),
        )
        return [row[0] for row in cursor.fetchall()]


def _fingerprints_of(person: Person) -> list[str]:
    return [
        fp
        for fp in _raw(
            "repetition_tracking",
            "fingerprint",
            "WHERE person_id = %s",
            [Person._meta.pk.get_db_prep_value(person.id, connection)],
        )
        if fp
    ]


# --- Fingerprints keyed per person ----------------------------------------------------------


def test_the_same_words_of_two_people_share_no_fingerprint_token():
    nana, grandad = _person("Nana"), _person("Grandad")
    for person in (nana, grandad):
        session, _ = services.session_resolve(session_id=uuid.uuid4(), user_id=person.id)
        _talk(session.id, QUESTION)
    (of_nana,), (of_grandad,) = _fingerprints_of(nana), _fingerprints_of(grandad)
    assert len(of_nana.split()) == len(of_grandad.split()) == 3  # blue, cardigan, want
    # No token in common: counting tokens across people finds no common word.
    assert not set(of_nana.split()) & set(of_grandad.split())


def test_one_persons_repeats_are_found_as_before_within_and_across_sessions():
    nana, grandad = _person("Nana"), _person("Grandad")
    now = timezone.now()
    earlier, _ = services.session_resolve(session_id=uuid.uuid4(), user_id=nana.id)
    _talk(earlier.id, QUESTION, at=now - timedelta(days=1))
    # Another person asking the same is not Nana's repeat.
    theirs, _ = services.session_resolve(session_id=uuid.uuid4(), user_id=grandad.id)
    _talk(theirs.id, QUESTION, at=now - timedelta(hours=2))

    current, _ = services.session_resolve(session_id=uuid.uuid4(), user_id=nana.id)
    result = selectors.memory_query(session_id=current.id, message=QUESTION, now=now)
    assert (result.question_type, result.cross_session_repeat_count) == ("general", 1)
    _talk(current.id, QUESTION, at=now)
    again = selectors.memory_query(
        session_id=current.id, message="My blue cardigan, I want it", now=now
    )
    assert (again.is_repeat, again.repeat_count) == (True, 1)
    record = RepetitionRecord.objects.filter(session_id=current.id).get()
    scope = repetition.scope_of(person_id=nana.id, session_id=None)
    assert record.fingerprint == repetition.stored_fingerprint(QUESTION, scope=scope)
    assert RepetitionRecord.objects.filter(fingerprint=record.fingerprint).count() == 2


def test_an_anonymous_sessions_fingerprints_join_the_person_when_it_is_linked():
    nana = _person("Nana")
    now = timezone.now()
    anonymous, _ = services.session_resolve(session_id=uuid.uuid4())
    _talk(anonymous.id, QUESTION, at=now - timedelta(days=1))
    services.session_resolve(session_id=anonymous.id, user_id=nana.id)

    record = RepetitionRecord.objects.get(session_id=anonymous.id)
    scope = repetition.scope_of(person_id=nana.id, session_id=None)
    assert record.fingerprint == repetition.stored_fingerprint(QUESTION, scope=scope)
    current, _ = services.session_resolve(session_id=uuid.uuid4(), user_id=nana.id)
    result = selectors.memory_query(session_id=current.id, message=QUESTION, now=now)
    assert result.cross_session_repeat_count == 1


def test_plain_words_without_a_row_are_refused_not_keyed_under_nobody():
    from django.core.exceptions import FieldError

    with pytest.raises(FieldError):
        list(RepetitionRecord.objects.filter(fingerprint="blue cardigan want"))


# --- Idempotency keys as keyed digests ------------------------------------------------------


def test_the_idempotency_key_is_stored_as_a_keyed_digest_and_a_retry_finds_the_exchange():
    session, _ = services.session_resolve(session_id=uuid.uuid4(), user_id=_person("Nana").id)
    first = _talk(session.id, QUESTION, key=SECRET_KEY_TEXT)
    retry = _talk(session.id, QUESTION, key=SECRET_KEY_TEXT)

    assert first.created and not retry.created
    assert retry.user_message_id == first.user_message_id
    assert ChatMessage.objects.filter(session_id=session.id).count() == 2
    (stored,) = [key for key in _raw("chat_messages", "idempotency_key") if key]
    assert SECRET_KEY_TEXT not in stored
    kid, digest = stored.split(":")
    assert kid == crypto.keyring().primary.kid and len(digest) == 64


def test_the_same_idempotency_key_in_two_sessions_gives_two_digests():
    person = _person("Nana")
    for _ in range(2):
        session, _ = services.session_resolve(session_id=uuid.uuid4(), user_id=person.id)
        assert _talk(session.id, QUESTION, key=SECRET_KEY_TEXT).created
    stored = [key for key in _raw("chat_messages", "idempotency_key") if key]
    assert len(stored) == len(set(stored)) == 2


def test_a_retry_stored_under_an_old_key_is_found_during_a_rotation(settings):
    old, new = crypto.generate_key(), crypto.generate_key()
    settings.CLARA_ENCRYPTION_KEYS = [old]
    session, _ = services.session_resolve(session_id=uuid.uuid4(), user_id=_person("Nana").id)
    first = _talk(session.id, QUESTION, key=SECRET_KEY_TEXT)
    settings.CLARA_ENCRYPTION_KEYS = [new, old]
    retry = _talk(session.id, QUESTION, key=SECRET_KEY_TEXT)
    assert not retry.created and retry.user_message_id == first.user_message_id


# --- Stories about a person -----------------------------------------------------------------


def _story(person, **fields) -> Narrative:
    return Narrative.objects.create(
        title=fields.pop("title", "Nana's wedding at St Brigid's"),
        text=fields.pop("text", "Nana married Tom at St Brigid's in the spring of 1961."),
        category="reminiscence",
        person=person,
        **fields,
    )


def test_a_persons_story_is_encrypted_and_bound_to_its_row():
    story = _story(_person("Nana"))
    where, params = "WHERE id = %s", [story.id]
    (title,), (text,) = (
        _raw("narratives", "title", where, params),
        _raw("narratives", "text", where, params),
    )
    kid = crypto.keyring().primary.kid
    for value in (title, text):
        assert value.startswith(f"{crypto.ROW_PREFIX}{kid}:{story.id}:")
        assert "Brigid" not in value
    again = Narrative.objects.get(id=story.id)
    assert (again.title, again.text) == (story.title, story.text)


def test_a_story_moved_onto_another_row_does_not_read():
    nana = _person("Nana")
    story, other = _story(nana), _story(nana, title="Tea", text="Tea in the garden.")
    (text,) = _raw("narratives", "text", "WHERE id = %s", [story.id])
    with connection.cursor() as cursor:
        cursor.execute("UPDATE narratives SET text = %s WHERE id = %s", [text, other.id])
    with pytest.raises(crypto.DecryptionError):
        Narrative.objects.get(id=other.id)
    with pytest.raises(crypto.DecryptionError):
        narratives._person_stories(nana.id, timezone.now())[1]


def test_the_turn_reads_a_persons_story_in_plaintext():
    nana = _person("Nana")
    story = _story(nana, question_types=["general"], target_emotions=["sad"])
    session, _ = services.session_resolve(session_id=uuid.uuid4(), user_id=nana.id)
    (candidate,) = narratives._person_stories(nana.id, timezone.now())[1]
    assert (candidate.title, candidate.text) == (story.title, story.text)
    chosen = narratives.narrative_choose(
        person_id=nana.id,
        session_id=session.id,
        question_type="general",
        emotion="sad",
        distress=0.2,
        repeat_count=0,
        avoid_topics=[],
    )
    assert chosen is not None


def test_the_shared_library_stays_plaintext_and_is_read_as_before():
    library = Narrative.objects.create(
        id="library-sea", title="The sea", text="Waves on the shore.", category="grounding"
    )
    assert _raw("narratives", "title", "WHERE id = %s", [library.id]) == ["The sea"]
    assert "library-sea" in {c.id for c in narratives._library()}


# --- Narrative ids --------------------------------------------------------------------------


def test_a_new_story_gets_an_id_no_one_can_guess():
    nana = _person("Nana")
    first, second = _story(nana), _story(nana)
    for story in (first, second):
        assert uuid.UUID(story.id).version == 7
    assert first.id != second.id


def test_another_persons_story_id_is_answered_as_an_unknown_one_on_the_dashboard():
    nana, bruno = _person("Nana"), _person("Bruno")
    theirs, mine = _story(bruno, title="Bruno's boat"), _story(nana, title="Nana's garden")
    used = [{"id": theirs.id}, {"id": "no-such-story"}, {"id": mine.id}]
    titles = dashboard_selectors.story_titles(used, person=nana)
    assert titles[1] == "no such story"
    assert titles[2] == "Nana's garden"
    assert "Bruno's boat" not in titles
    assert titles[0] == theirs.id.replace("-", " ")  # as any unknown id is shown


def test_a_bot_naming_another_persons_story_learns_nothing_of_its_themes():
    """The themes of stories told this session reach the prompt the bot receives: a story id
    the bot named that is another person's (another organisation's) is left out like an
    unknown one."""
    nana, bruno = _person("Nana"), _person("Bruno")
    theirs = _story(bruno, theme_tags=["lifeboat"])
    mine = _story(nana, theme_tags=["garden"])
    found = narratives.theme_tags_of([theirs.id, mine.id, "no-such-story"], person_id=nana.id)
    assert found == {mine.id: ["garden"]}
    assert narratives.theme_tags_of([theirs.id], person_id=None) == {}


def test_a_queued_messages_client_key_is_stored_as_a_keyed_digest_and_a_retry_is_the_same():
    from memory.companion import turns
    from memory.models import PendingMessage

    session, _ = services.session_resolve(session_id=uuid.uuid4(), user_id=_person("Nana").id)
    first = turns.message_submit(session_id=session.id, message="Hello", client_key="m-1")
    queued = turns.message_submit(
        session_id=session.id, message="Are you there?", client_key=SECRET_KEY_TEXT
    )
    retry = turns.message_submit(
        session_id=session.id, message="Are you there?", client_key=SECRET_KEY_TEXT
    )
    assert isinstance(first, turns.Turn)
    assert retry.pending_id == queued.pending_id
    assert PendingMessage.objects.count() == 2
    stored = _raw("pending_messages", "client_key")
    assert SECRET_KEY_TEXT not in " ".join(stored) and "m-1" not in stored
    assert all(key.split(":")[0] == crypto.keyring().primary.kid for key in stored)
