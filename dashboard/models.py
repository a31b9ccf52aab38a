"""Who may see whom: care-team memberships, and the audit trail of what caregivers read and did.

A care team is within its person's organisation: only logins of that organisation
(memory's OrganisationMembership) are members, and the access check (dashboard.access) asks for
both memberships.

Erasure: memberships go with the person (CASCADE). Audit rows stay, but only point at the person
(SET_NULL on erasure) and never copy names or message text into their own columns, so erasing a
person leaves nothing identifying behind in the audit table.
"""

from django.conf import settings
from django.db import models
from django.utils import timezone

from memory.core.fields import EncryptedTextField
from memory.models import Organisation, Person, Unit


class CareRole(models.TextChoices):
    ADMIN = "admin", "Team admin"
    STAFF = "staff", "Care staff"
    FAMILY = "family", "Family"


class CareTeamMembership(models.Model):
    """A caregiver (a Django user) in the care team of one person, with a role.

    Every member sees summaries, trends and alerts and may curate the profile; full transcripts
    only with `can_see_transcripts`; only the `admin` role manages the team, exports and erases.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="care_memberships"
    )
    # Indexed by uniq_care_team_person_user, which leads with it.
    person = models.ForeignKey(
        Person, on_delete=models.CASCADE, related_name="care_team", db_index=False
    )
    role = models.CharField(max_length=16, choices=CareRole.choices, default=CareRole.FAMILY)
    can_see_transcripts = models.BooleanField(default=False)
    # A family member who is the person's named carer at home: outside a care home they claim
    # and resolve the person's alerts (dashboard/alerting/rights.py). Set by a team admin.
    named_carer = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    # Given by a unit's team (UnitTeamMembership, dashboard/units/services.py): the login is in
    # the care team of everyone in that unit while the person lives there and the login is in
    # the unit's team. Null: given to this person alone (the care team page, an invitation),
    # which no unit change ever touches. CASCADE: a unit that goes (it has no people then) takes
    # what it gave. Indexed: "what this unit gave" when its team changes or a person leaves it.
    granted_by_unit = models.ForeignKey(
        Unit, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )

    class Meta:
        db_table = "care_team_memberships"
        constraints = [
            # One membership per caregiver and person; also the access check of every request
            # (WHERE person_id=? AND user_id=?). The people list reads by user (the FK index).
            models.UniqueConstraint(fields=["person", "user"], name="uniq_care_team_person_user"),
        ]

    def __str__(self) -> str:
        return f"{self.user} → {self.person} ({self.role})"

    @property
    def is_admin(self) -> bool:
        return self.role == CareRole.ADMIN


class UnitTeamMembership(models.Model):
    """A login in the care team of everyone in a unit, with one role and transcript right.

    It gives a CareTeamMembership (granted_by_unit) to each person in the unit, including people
    moved in later; a person moved out loses it (never a membership given to them alone). The
    access check reads only CareTeamMembership, so it is unchanged. Written only through
    dashboard/units/services.py, which keeps the per-person rows in step in the same transaction.
    Roles: team admin or care staff (family belong to one person's team, not a unit's).
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="unit_memberships"
    )
    # Indexed by uniq_unit_team_unit_user, which leads with it.
    unit = models.ForeignKey(Unit, on_delete=models.CASCADE, related_name="team", db_index=False)
    role = models.CharField(max_length=16, choices=CareRole.choices, default=CareRole.STAFF)
    can_see_transcripts = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "unit_team_memberships"
        constraints = [
            # One role per login and unit; also "the unit's team" when a person moves in.
            models.UniqueConstraint(fields=["unit", "user"], name="uniq_unit_team_unit_user"),
        ]

    def __str__(self) -> str:
        return f"{self.user} → {self.unit} ({self.role})"


class AuditAction(models.TextChoices):
    """What a caregiver read or did. Codes, never free text: nothing about the person is copied."""

    VIEW_PERSON = "view_person", "opened the person's page"
    VIEW_EMOTIONS = "view_emotions", "read the emotion timeline"
    VIEW_PATTERNS = "view_patterns", "read the time-of-day patterns"
    VIEW_REPETITION = "view_repetition", "read the repeated questions"
    VIEW_CALMING = "view_calming", "read what calms them"
    VIEW_SESSIONS = "view_sessions", "read the list of conversations"
    VIEW_SESSION = "view_session", "read a conversation's summary"
    VIEW_TRANSCRIPT = "view_transcript", "read a full conversation"
    VIEW_ALERTS = "view_alerts", "read the alerts"
    VIEW_TEAM = "view_team", "read the care team"
    VIEW_PROFILE = "view_profile", "read the profile"
    VIEW_MEMORIES = "view_memories", "read what Clara remembers"
    VIEW_NOTES = "view_notes", "read the caregivers' notes"
    ADD_NOTE = "add_note", "wrote a note for the care team"
    # The shift's home view: one row per organisation shown (person empty), not per person.
    VIEW_HOME = "view_home", "read the shift's overview of everyone"
    # The people list: likewise one row per organisation shown.
    VIEW_PEOPLE = "view_people", "read the list of people"
    # An organisation's own pages, for its admins (person empty).
    VIEW_AUDIT = "view_audit", "read the organisation's audit"
    VIEW_INVITATIONS = "view_invitations", "read the organisation's invitations"
    # A person page asked for by a login not in the person's care team, or for an id that is no
    # one's: answered 404 like an unknown id (allowed=False). The object is the id asked for;
    # the person is named only when they are of the login's own organisation.
    PERSON_NOT_FOUND = "person_not_found", "asked for a person not theirs to see"
    EXPORT_JSON = "export_json", "downloaded everything (JSON)"
    EXPORT_CSV = "export_csv", "downloaded what Clara remembers (CSV)"
    REPORT_PDF = "report_pdf", "downloaded the clinician report (PDF)"
    ALERT_STATUS = "alert_status", "changed an alert"
    # A member chose (or stopped) the weekly summary e-mail, from the family page.
    EDIT_DIGEST = "edit_digest", "chose whether to get the weekly summary"
    # An organisation's admin changed its care setting or who answers its alerts.
    EDIT_ALERTING = "edit_alerting", "changed who answers alerts"
    # The organisation's alerts with no person yet (an anonymous session's), and saying whom
    # one was about (the object is the alert's id; the person is the one it was attached to).
    VIEW_ORG_ALERTS = "view_org_alerts", "read the organisation's alerts"
    ALERT_ATTACH = "alert_attach", "said whom an alert was about"
    # False alarms per person per week, for team admins: one row per organisation shown.
    VIEW_FALSE_ALARMS = "view_false_alarms", "read the false alarms per person"
    EDIT_PROFILE = "edit_profile", "edited the profile"
    EDIT_MEMORY = "edit_memory", "changed a memory"
    FORGET_MEMORY = "forget_memory", "forgot a memory"
    # Staff let an item the prompt firewall held back reach Clara as quoted data. The object is
    # the memory's id, or for other items the keyed digest of the text (never the text).
    APPROVE_HELD_BACK = "approve_held_back", "let a held-back item reach Clara"
    EDIT_TEAM = "edit_team", "changed the care team"
    # The profile's remembering controls (issue 32): remembering switched off or on (the object
    # is "off" or "on"), and everything about one person or of one kind forgotten (the object is
    # the kind of thing, "person" or the memory type: never a name).
    EDIT_REMEMBERING = "edit_remembering", "switched remembering off or on"
    FORGET_ABOUT = "forget_about", "forgot everything about one person or topic"
    VIEW_ERASE = "view_erase", "opened the erase page"
    ERASE = "erase", "erased the person"
    # Allowed to erase, but the typed name did not match: nothing was erased (allowed=False).
    ERASE_UNCONFIRMED = "erase_unconfirmed", "tried to erase, wrong confirmation"
    EXPORT_READABLE = "export_readable", "downloaded the readable record"
    # An organisation's admin invites a login; the invitee accepts; an admin revokes. The object
    # is the invitation's id (never the address).
    INVITATION_SENT = "invitation_sent", "sent an invitation"
    INVITATION_ACCEPTED = "invitation_accepted", "accepted an invitation"
    INVITATION_REVOKED = "invitation_revoked", "revoked an invitation"
    # A login's own second factor, after passing it: new recovery codes (the old stop working),
    # or a new authenticator app in place of the old. The object is the device's id.
    RECOVERY_CODES_RENEWED = "recovery_codes_renewed", "made new recovery codes"
    AUTHENTICATOR_REPLACED = "authenticator_replaced", "set up a new authenticator app"
    # An organisation's admin added or renamed a home or a unit (the object is its id), moved a
    # person to a unit or out of one (the person named; the object is the unit's id, or empty),
    # or gave or took a unit's role (the object is the unit's id). Names never go in.
    EDIT_HOMES = "edit_homes", "added or renamed a home or unit"
    MOVE_PERSON = "move_person", "moved a person to another unit"
    EDIT_UNIT_TEAM = "edit_unit_team", "changed a unit's care team"
    VIEW_HOMES = "view_homes", "read the homes, units and who lives where"


class AuditEvent(models.Model):
    """One caregiver read or action on a person's data; written by dashboard.access, never edited."""

    at = models.DateTimeField(default=timezone.now)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    # The caregiver's login name, kept when the user is deleted: the audit must still say who.
    username = models.CharField(max_length=150)
    # The person's organisation, kept when the person is erased: its admin reads its audit.
    # Indexed by idx_audit_org_at, which leads with it.
    organisation = models.ForeignKey(
        Organisation,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        db_index=False,
    )
    # SET_NULL: erasing the person leaves the row (someone read something, then) without them.
    # Indexed by idx_audit_person_at, which leads with it.
    person = models.ForeignKey(
        Person,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    action = models.CharField(max_length=32, choices=AuditAction.choices)
    # The id of the session, alert, memory or membership concerned (never its text).
    object_id = models.CharField(max_length=64, blank=True, default="")
    # False: a member asked for something their role does not allow (answered 403).
    allowed = models.BooleanField(default=True)

    class Meta:
        db_table = "dashboard_audit"
        indexes = [
            # "Who looked at this person, newest first" (admin filter, reviews).
            models.Index(fields=["person", "-at"], name="idx_audit_person_at"),
            # "What did this caregiver look at".
            models.Index(fields=["user", "-at"], name="idx_audit_user_at"),
            # An organisation's audit, newest first (its admin's audit page).
            models.Index(fields=["organisation", "-at"], name="idx_audit_org_at"),
        ]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.username} {self.action}"


class FactSuggestion(models.Model):
    """A family member's correction of something Clara remembers, waiting for care staff.

    Family may not say what is true (Clara would state it to the person as fact): their change
    waits here until a team admin or care staff accepts it (a new confirmed version of the
    memory) or declines it. One pending suggestion per memory; a newer one replaces it.
    Erasure: goes with the person (CASCADE). The text is the caregiver's words about the person,
    so it is encrypted at rest.
    """

    person = models.ForeignKey(Person, on_delete=models.CASCADE, related_name="+", db_index=False)
    # The memory's id, not a foreign key: memories are superseded and erased by the fact
    # store's own rules, and a suggestion must never stand in their way.
    memory_id = models.UUIDField()
    suggested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_index=False,
    )
    content = EncryptedTextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "dashboard_fact_suggestions"
        constraints = [
            # One pending suggestion per memory; the review page reads them by person.
            models.UniqueConstraint(fields=["memory_id"], name="uniq_fact_suggestion_memory"),
        ]
        indexes = [models.Index(fields=["person"], name="idx_fact_suggestion_person")]

    def __str__(self) -> str:
        return f"suggestion for memory {self.memory_id}"


# The alerts' delivery and timeline (dashboard/alerting/models.py) and invitations
# (dashboard/accounts/models.py), registered with this app.
from dashboard.accounts.models import Invitation  # noqa: E402, F401
from dashboard.alerting.models import (  # noqa: E402, F401
    AlertEscalation,
    AlertNotice,
    AlertRouting,
    AlertStep,
    DigestSent,
    OnCall,
    OrganisationAlerting,
)

# Notes between caregivers on a person (dashboard/notes/models.py), registered with this app.
from dashboard.notes.models import CaregiverNote  # noqa: E402, F401

# The second factor's devices, secrets encrypted (dashboard/second_factor/models.py).
from dashboard.second_factor.models import (  # noqa: E402, F401
    AuthenticatorDevice,
    RecoveryCode,
    RecoveryDevice,
)
