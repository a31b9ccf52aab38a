"""Care teams written before organisations reached the dashboard: their logins join the
organisation of their people (the default one), and audit rows name it."""

import uuid

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("dashboard", "0003_audit_organisation_and_forget")]
AFTER = [("dashboard", "0004_care_teams_join_their_organisation")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return MigrationExecutor(connection).loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_care_team_logins_join_the_default_organisation():
    from memory.conversations import tenancy

    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    # Made by memory's migration 0013, but a transactional test that ran earlier flushes it
    # away; made with today's model, since only the dashboard's migrations go back.
    tenancy.organisation_get_or_create()
    try:
        old = _migrate(BEFORE)
        now = timezone.now()
        default = old.get_model("memory", "Organisation").objects.get(slug="default")
        Person = old.get_model("memory", "Person")
        nana = Person.objects.create(
            id=uuid.uuid4(), display_name="Nana", created_at=now, last_active_at=now
        )
        grandad = Person.objects.create(
            id=uuid.uuid4(), display_name="Grandad", created_at=now, last_active_at=now
        )
        User = old.get_model("auth", "User")
        alice, bob, nobody = (User.objects.create(username=n) for n in ("alice", "bob", "zoe"))
        Team = old.get_model("dashboard", "CareTeamMembership")
        Team.objects.create(user=alice, person=nana, role="admin")
        Team.objects.create(user=alice, person=grandad, role="admin")
        Team.objects.create(user=bob, person=nana, role="family")
        Audit = old.get_model("dashboard", "AuditEvent")
        read = Audit.objects.create(username="alice", person=nana, action="view_person")
        orphan = Audit.objects.create(username="alice", person=None, action="erase")

        new = _migrate(AFTER)
        members = new.get_model("memory", "OrganisationMembership").objects
        assert sorted(members.values_list("user__username", "organisation_id", "is_admin")) == [
            ("alice", default.pk, False),
            ("bob", default.pk, False),
        ]
        assert not members.filter(user_id=nobody.pk).exists()  # in no care team
        Audit = new.get_model("dashboard", "AuditEvent")
        assert Audit.objects.get(pk=read.pk).organisation_id == default.pk
        assert Audit.objects.get(pk=orphan.pk).organisation_id is None
    finally:
        _migrate(latest)


NAMES_BEFORE = [("memory", "0022_pgvector_search_columns")]
NAMES_AFTER = [("memory", "0023_person_name_bound_to_its_row")]


@pytest.mark.django_db(transaction=True)
def test_names_sealed_for_lookup_are_bound_to_their_row_and_back():
    from memory.core import crypto

    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    quote = connection.ops.quote_name
    try:
        old = _migrate(NAMES_BEFORE)
        now = timezone.now()
        Person = old.get_model("memory", "Person")
        nana = Person.objects.create(
            id=uuid.uuid4(), display_name="Nana Plum", created_at=now, last_active_at=now
        )
        unnamed = Person.objects.create(id=uuid.uuid4(), created_at=now, last_active_at=now)

        def stored(person):
            with connection.cursor() as cursor:
                cursor.execute(
                    f"SELECT display_name FROM {quote('people')} WHERE id = %s",  # noqa: S608
                    [Person._meta.pk.get_db_prep_value(person.id, connection)],
                )
                return cursor.fetchone()[0]

        assert stored(nana).startswith(crypto.LOOKUP_PREFIX)

        new = _migrate(NAMES_AFTER)
        assert stored(nana).startswith(f"{crypto.ROW_PREFIX}{crypto.keyring().primary.kid}:")
        assert f":{nana.id}:" in stored(nana)
        Person = new.get_model("memory", "Person")
        assert Person.objects.get(display_name="Nana Plum").id == nana.id
        assert Person.objects.get(id=unnamed.id).display_name == ""

        old = _migrate(NAMES_BEFORE)
        assert stored(nana).startswith(crypto.LOOKUP_PREFIX)
        assert old.get_model("memory", "Person").objects.get(display_name="Nana Plum").id == nana.id
    finally:
        _migrate(latest)


DEVICES_BEFORE = [
    ("dashboard", "0013_second_factor_secrets_encrypted"),
    ("otp_totp", "0003_add_timestamps"),
    ("otp_static", "0003_add_timestamps"),
]
DEVICES_AFTER = [("dashboard", "0014_move_second_factor_devices")]


@pytest.mark.django_db(transaction=True)
def test_django_otp_devices_move_into_the_encrypted_ones():
    from dashboard.second_factor.models import AuthenticatorDevice, recovery_digests

    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        old = _migrate(DEVICES_BEFORE)
        user = old.get_model("auth", "User").objects.create(username="ops")
        totp = old.get_model("otp_totp", "TOTPDevice").objects.create(
            user=user, name="Authenticator app", key="3132333435363738393031323334353637383930"
        )
        static = old.get_model("otp_static", "StaticDevice").objects.create(
            user=user, name="Recovery codes"
        )
        static.token_set.create(token="abcd2345")

        new = _migrate(DEVICES_AFTER)
        assert not new.get_model("otp_totp", "TOTPDevice").objects.exists()
        assert not new.get_model("otp_static", "StaticDevice").objects.exists()
        assert not new.get_model("otp_static", "StaticToken").objects.exists()
        device = AuthenticatorDevice.objects.get(user_id=user.pk)
        assert device.key == totp.key and device.confirmed
        with connection.cursor() as cursor:
            cursor.execute("SELECT key FROM dashboard_totp_devices WHERE id = %s", [device.pk])
            assert totp.key not in cursor.fetchone()[0]
        Code = new.get_model("dashboard", "RecoveryCode")
        assert list(Code.objects.values_list("digest", flat=True)) == [
            recovery_digests("abcd2345")[0]
        ]

        back = _migrate(DEVICES_BEFORE)
        assert back.get_model("otp_totp", "TOTPDevice").objects.get().key == totp.key
        assert back.get_model("otp_static", "StaticDevice").objects.filter(user_id=user.pk).exists()
    finally:
        _migrate(latest)


MEANINGS_BEFORE = [("memory", "0025_repetition_counts_read_the_index_alone")]
MEANINGS_AFTER = [("memory", "0026_meaning_bound_to_its_row")]


@pytest.mark.django_db(transaction=True)
def test_meanings_bound_to_their_column_only_are_bound_to_their_row():
    from memory.conversations import meaning, repeats, services
    from memory.core import crypto
    from memory.models import Person, RepetitionRecord

    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        # Written with today's models at today's schema (later migrations added columns that
        # today's models write), then taken back to before the rebinding: the rows stay.
        now = timezone.now()
        person = Person.objects.create(display_name="Nana", created_at=now, last_active_at=now)
        session, _ = services.session_resolve(session_id=uuid.uuid4(), user_id=person.id)
        services.exchange_record(
            session_id=session.id, user_message="Where is my coat?", assistant_message="Here."
        )
        record = RepetitionRecord.objects.get(session_id=session.id)
        db_id = RepetitionRecord._meta.pk.get_db_prep_value(record.id, connection)
        # As the exchange write stored it before: bound to the column only.
        column_only = crypto.encrypt_bytes(
            meaning.to_stored(meaning.analyse("Where is my coat?")),
            context=repeats.MEANING_CONTEXT,
        )

        def stored():
            with connection.cursor() as cursor:
                cursor.execute("SELECT meaning FROM repetition_tracking WHERE id = %s", [db_id])
                return bytes(cursor.fetchone()[0])

        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE repetition_tracking SET meaning = %s WHERE id = %s", [column_only, db_id]
            )
        assert stored().startswith(crypto.BOUND_PREFIX.encode())
        _migrate(MEANINGS_BEFORE)
        assert stored().startswith(crypto.BOUND_PREFIX.encode())

        _migrate(MEANINGS_AFTER)
        kid = crypto.keyring().primary.kid
        assert stored().startswith(f"{crypto.ROW_PREFIX}{kid}:{record.id}:".encode())
        rebound = repeats.from_db(stored(), db_id)
        assert rebound is not None
        assert float(rebound.vector @ repeats.from_db(column_only).vector) > 0.99

        _migrate(MEANINGS_BEFORE)  # reversible: the code before reads row-bound meanings too
        assert repeats.from_db(stored()) is not None
    finally:
        _migrate(latest)


ALERTS_BEFORE = [
    ("memory", "0029_message_escalated"),
    ("dashboard", "0014_move_second_factor_devices"),
]
ALERTS_AFTER = [("memory", "0032_alert_acted_replaced_by_claim_and_resolution")]


@pytest.mark.django_db(transaction=True)
def test_old_alert_states_become_claims_and_resolutions_and_back():
    """looking_into → claimed (who, when kept); acknowledged → resolved, outcome unknown."""
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    try:
        old = _migrate(ALERTS_BEFORE)
        now = timezone.now()
        Person = old.get_model("memory", "Person")
        nana = Person.objects.create(
            id=uuid.uuid4(), display_name="Nana", created_at=now, last_active_at=now
        )
        ann = old.get_model("auth", "User").objects.create(username="ann")
        Alert = old.get_model("memory", "Alert")
        made = {
            status: Alert.objects.create(
                person=nana,
                kind="escalation",
                dedupe_key=f"m:{status}",
                created_at=now,
                status=status,
                acted_by=None if status == "open" else ann,
                acted_at=None if status == "open" else now,
            ).pk
            for status in ("open", "looking_into", "acknowledged")
        }

        new = _migrate(ALERTS_AFTER)
        rows = {
            row["id"]: row
            for row in new.get_model("memory", "Alert")
            .objects.filter(id__in=made.values())
            .values("id", "status", "claimed_by_id", "claimed_at", "resolved_by_id", "outcome")
        }
        assert rows[made["open"]]["status"] == "open"
        claimed = rows[made["looking_into"]]
        assert (claimed["status"], claimed["claimed_by_id"], claimed["claimed_at"]) == (
            "claimed",
            ann.pk,
            now,
        )
        resolved = rows[made["acknowledged"]]
        assert (resolved["status"], resolved["resolved_by_id"], resolved["outcome"]) == (
            "resolved",
            ann.pk,
            "unknown",
        )

        back = _migrate(ALERTS_BEFORE)
        statuses = dict(
            back.get_model("memory", "Alert")
            .objects.filter(id__in=made.values())
            .values_list("id", "status")
        )
        assert statuses == {pk: status for status, pk in made.items()}
    finally:
        _migrate(latest)


ROUND_THREE_BEFORE = [("memory", "0032_alert_acted_replaced_by_claim_and_resolution")]
ROUND_THREE_AFTER = [("memory", "0034_narrative_ids_texts_keys_and_fingerprints_rewritten")]


@pytest.mark.django_db(transaction=True)
def test_stories_keys_and_fingerprints_written_before_are_rewritten_and_back():
    """Issue 30, step 5: a person's story with a typed id and plaintext text, a plaintext
    idempotency key, fingerprints under the one key of all people."""
    import importlib

    from memory.companion import turns
    from memory.conversations import repetition, services
    from memory.conversations import sql as storage
    from memory.core import crypto
    from memory.models import (
        ChatMessage,
        Narrative,
        NarrativeUsage,
        PendingMessage,
        Person,
        RepetitionRecord,
    )

    rewrite = importlib.import_module(
        "memory.migrations.0034_narrative_ids_texts_keys_and_fingerprints_rewritten"
    )
    question = "I want my blue cardigan"
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()

    def raw(sql, params=()):
        with connection.cursor() as cursor:
            cursor.execute(sql, list(params))
            return cursor.fetchall() if cursor.description else None

    try:
        now = timezone.now()
        person = Person.objects.create(
            display_name="Nana",
            created_at=now,
            last_active_at=now,
            caregiver_context={
                "agreedQuestions": [
                    {"question": question, "answer": "In the wardrobe.", "fingerprint": "x"}
                ]
            },
        )
        session, _ = services.session_resolve(session_id=uuid.uuid4(), user_id=person.id)
        Narrative.objects.create(
            id="nan-wedding",
            title="Nana's wedding at St Brigid's",
            text="Married in the spring of 1961.",
            category="reminiscence",
            person=person,
        )
        services.exchange_record(
            session_id=session.id,
            user_message=question,
            assistant_message="In the wardrobe, dear.",
            idempotency_key="turn-7",
            narrative=services.NarrativeRef("nan-wedding", "seed", "reminiscence"),
        )
        db_session = storage.db_uuid(session.id)

        old_apps = _migrate(ROUND_THREE_BEFORE)
        # The reverse: plaintext stories, fingerprints as the code before made them.
        assert raw("SELECT title FROM narratives WHERE id = 'nan-wedding'") == [
            ("Nana's wedding at St Brigid's",)
        ]
        legacy = rewrite._legacy_tokens(repetition.fingerprint(question))
        assert raw("SELECT fingerprint FROM repetition_tracking") == [(legacy,)]
        # As the code before stored the keys: verbatim.
        raw("UPDATE chat_messages SET idempotency_key = 'turn-7' WHERE idempotency_key IS NOT NULL")
        pending = old_apps.get_model("memory", "PendingMessage").objects.create(
            id=uuid.uuid4(),
            person_id=person.id,
            session_id=session.id,
            content="Are you there?",
            client_key="m-1",
            arrival=1,
            arrived_at=now,
        )

        _migrate(ROUND_THREE_AFTER)
        assert raw("SELECT id FROM narratives WHERE id = 'nan-wedding'") == []
        ((new_id, title),) = raw(
            "SELECT id, title FROM narratives WHERE person_id = %s",
            [storage.db_uuid(person.id)],
        )
        assert uuid.UUID(new_id).version == 7
        assert title.startswith(f"{crypto.ROW_PREFIX}{crypto.keyring().primary.kid}:{new_id}:")
        assert raw("SELECT narrative_id FROM narrative_usage") == [(new_id,)]
        assert raw("SELECT narrative_id FROM chat_messages WHERE narrative_id IS NOT NULL") == [
            (new_id,)
        ]
        assert raw("SELECT idempotency_key FROM chat_messages WHERE role = 'user'") == [
            (storage.db_idempotency_key("turn-7", session_id=db_session),)
        ]
        assert raw("SELECT client_key FROM pending_messages") == [
            (turns.client_key_digests("m-1", person_id=person.id)[0],)
        ]
        scope = repetition.scope_of(person_id=person.id, session_id=None)
        tokens = repetition.stored_fingerprint(question, scope=scope)
        assert raw("SELECT fingerprint FROM repetition_tracking") == [(tokens,)]
    finally:
        _migrate(latest)

    # Today's code reads what the migration wrote: the story, the retry, the agreed answer.
    story = Narrative.objects.get(person=person)
    assert story.title == "Nana's wedding at St Brigid's"
    assert NarrativeUsage.objects.get().narrative_id == story.id
    retry = services.exchange_record(
        session_id=session.id,
        user_message=question,
        assistant_message="In the wardrobe, dear.",
        idempotency_key="turn-7",
    )
    assert not retry.created and ChatMessage.objects.count() == 2
    agreed = Person.objects.get(id=person.id).caregiver_context["agreedQuestions"][0]
    assert agreed["fingerprint"] == tokens
    assert RepetitionRecord.objects.filter(fingerprint=tokens).count() == 1
    # The queued message is found by its key as before: a retry queues nothing new.
    turn = turns.message_submit(session_id=session.id, message="Are you there?", client_key="m-1")
    assert turn.parts == ["Are you there?"]
    assert list(PendingMessage.objects.values_list("id", flat=True)) == [pending.id]
