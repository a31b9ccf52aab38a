"""The caregiver dashboard's pages and htmx partials (each partial is a page of its own too)."""

from django.contrib.auth import views as auth_views
from django.urls import path

from dashboard import export, home, profile, remembering, two_factor, views
from dashboard.accounts import views as accounts
from dashboard.alerting import noise as alerting_noise
from dashboard.alerting import organisation as alerting_organisation
from dashboard.alerting import views as alerting_views
from dashboard.family import views as family_views
from dashboard.fhir import views as fhir_views
from dashboard.notes import views as notes_views
from dashboard.units import views as units_views

app_name = "dashboard"

person = "people/<uuid:person_id>/"

urlpatterns = [
    path(
        "login/",
        auth_views.LoginView.as_view(
            template_name="registration/login.html", redirect_authenticated_user=True
        ),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # The FHIR export's own codes, at the URLs that name them (dashboard/fhir/codes.py).
    path("fhir/CodeSystem/<slug:name>", fhir_views.code_system, name="fhir_code_system"),
    path("account/two-factor/", two_factor.verify, name="two_factor"),
    path("account/two-factor/setup/", two_factor.setup, name="two_factor_setup"),
    path("account/two-factor/manage/", two_factor.manage, name="two_factor_manage"),
    path(
        "account/two-factor/recovery-codes/", two_factor.recovery_codes, name="two_factor_recovery"
    ),
    path("account/two-factor/replace/", two_factor.replace, name="two_factor_replace"),
    *accounts.urlpatterns,
    path("", views.people, name="people"),
    path("home/", home.home, name="home"),
    path("alerts/false-alarms/", alerting_noise.false_alarms, name="false_alarms"),
    path("organisations/<slug:slug>/audit/", views.organisation_audit, name="organisation_audit"),
    path(
        "organisations/<slug:slug>/alerts/",
        alerting_organisation.organisation_alerts,
        name="organisation_alerts",
    ),
    path(
        "organisations/<slug:slug>/alerts/<int:alert_id>/",
        alerting_organisation.organisation_alert_act,
        name="organisation_alert_act",
    ),
    path(
        "organisations/<slug:slug>/alerts/settings/",
        alerting_organisation.alert_settings,
        name="organisation_alert_settings",
    ),
    path("organisations/<slug:slug>/homes/", units_views.homes_page, name="organisation_homes"),
    path(
        "organisations/<slug:slug>/alerts/on-call/",
        alerting_organisation.on_call_edit,
        name="organisation_on_call",
    ),
    path(person, views.person, name="person"),
    path(f"{person}weekly-summary/", family_views.digest, name="family_digest"),
    path(f"{person}emotions/", views.person_emotions, name="person_emotions"),
    path(f"{person}patterns/", views.person_patterns, name="person_patterns"),
    path(f"{person}questions/", views.person_repetition, name="person_repetition"),
    path(f"{person}what-helps/", views.person_calming, name="person_calming"),
    path(f"{person}conversations/", views.person_sessions, name="person_sessions"),
    path(f"{person}conversations/<uuid:session_id>/", views.session, name="session"),
    path(
        f"{person}conversations/<uuid:session_id>/transcript/",
        views.session_transcript,
        name="session_transcript",
    ),
    path(f"{person}alerts/", views.person_alerts, name="person_alerts"),
    path(f"{person}alerts/<int:alert_id>/", views.alert_status, name="alert_status"),
    path(f"{person}alerts/<int:alert_id>/note/", alerting_views.alert_note, name="alert_note"),
    path(f"{person}report.pdf", alerting_views.clinician_report, name="clinician_report"),
    path(f"{person}alerts/mine/", alerting_views.alert_routing, name="alert_routing"),
    path("alerts/ack/<str:token>/", alerting_views.alert_ack, name="alert_ack"),
    path(f"{person}notes/", notes_views.person_notes, name="person_notes"),
    path(f"{person}team/", views.team, name="team"),
    path(f"{person}team/add/", views.team_add, name="team_add"),
    path(f"{person}team/<int:membership_id>/", views.team_member, name="team_member"),
    path(f"{person}profile/", profile.profile, name="profile"),
    path(
        f"{person}profile/answers/<uuid:record_id>/",
        profile.agreed_answer,
        name="agreed_answer",
    ),
    path(
        f"{person}profile/people/entered/remove/",
        profile.family_contact_remove,
        name="family_contact_remove",
    ),
    path(
        f"{person}profile/remembering/",
        remembering.remembering_section,
        name="remembering",
    ),
    path(f"{person}profile/remembering/forget/", remembering.forget_about, name="forget_about"),
    path(
        f"{person}profile/<slug:section>/<uuid:memory_id>/<slug:action>/",
        profile.profile_memory,
        name="profile_memory",
    ),
    path(f"{person}profile/<slug:section>/", profile.profile_section, name="profile_section"),
    path(f"{person}memories/", views.memories, name="memories"),
    path(
        f"{person}memories/held-back/approve/",
        views.held_back_approve,
        name="held_back_approve",
    ),
    path(
        f"{person}memories/<uuid:memory_id>/<slug:action>/",
        views.memory_action,
        name="memory_action",
    ),
    path(f"{person}export.json", views.export_json, name="export_json"),
    path(f"{person}export.csv", views.export_csv, name="export_csv"),
    path(f"{person}record.html", export.readable_html, name="export_readable"),
    path(f"{person}record.pdf", export.readable_pdf, name="export_readable_pdf"),
    path(f"{person}erase/", views.erase, name="erase"),
]
