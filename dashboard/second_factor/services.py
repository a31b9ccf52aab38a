"""A login's own second factor: issuing recovery codes, replacing the authenticator app."""

from django.db import transaction
from django_otp.plugins.otp_static.models import StaticToken

from dashboard.access import audit_record
from dashboard.models import AuditAction
from dashboard.second_factor.models import (
    AuthenticatorDevice,
    RecoveryCode,
    RecoveryDevice,
    recovery_digests,
)
from memory.models import OrganisationMembership

RECOVERY_CODES = 10
AUTHENTICATOR = "Authenticator app"
RECOVERY = "Recovery codes"


def _audit(*, user, action: str, object_id) -> None:
    """One row in each of the login's organisations' audit (its admins read it), or one with no
    organisation for an operator who belongs to none."""
    organisations = list(
        OrganisationMembership.objects.filter(user_id=user.pk).values_list(
            "organisation_id", flat=True
        )
    )
    for organisation_id in organisations or [None]:
        audit_record(
            user=user,
            person_id=None,
            action=action,
            object_id=str(object_id),
            organisation_id=organisation_id,
        )


def recovery_codes_issue(*, user, renewed: bool = False) -> list[str]:
    """New recovery codes for the login (the old ones stop working); returns them, once: only
    their keyed hashes are kept. `renewed`: the login asked for new ones (audited)."""
    codes = [StaticToken.random_token() for _ in range(RECOVERY_CODES)]
    with transaction.atomic():
        device, _ = RecoveryDevice.objects.get_or_create(
            user=user, name=RECOVERY, defaults={"confirmed": True}
        )
        device.codes.all().delete()
        RecoveryCode.objects.bulk_create(
            [RecoveryCode(device=device, digest=recovery_digests(code)[0]) for code in codes]
        )
        if renewed:
            _audit(user=user, action=AuditAction.RECOVERY_CODES_RENEWED, object_id=device.pk)
    return codes


def authenticator_pending(*, user) -> AuthenticatorDevice:
    """The login's authenticator app being set up (made if there is none): not yet confirmed,
    so it verifies nothing until its first code is typed."""
    device = AuthenticatorDevice.objects.filter(user=user, confirmed=False).order_by("-id").first()
    if device is None:
        device = AuthenticatorDevice.objects.create(user=user, name=AUTHENTICATOR, confirmed=False)
    return device


def authenticator_replace(*, user, device: AuthenticatorDevice) -> AuthenticatorDevice:
    """Confirm `device` (a code from it has just been verified) and remove the login's other
    authenticator apps, in one transaction; audited."""
    with transaction.atomic():
        AuthenticatorDevice.objects.filter(user=user).exclude(pk=device.pk).delete()
        device.confirmed = True
        device.save(update_fields=["confirmed"])
        _audit(user=user, action=AuditAction.AUTHENTICATOR_REPLACED, object_id=device.pk)
    return device
