from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="WebhookSecretOut")


@_attrs_define
class WebhookSecretOut:
    """
    Attributes:
        id (UUID):
        secret (str): The new signing secret (whsec_ + base64); shown only now.
        previous_secret_expires_at (datetime.datetime): Until then the previous secret signs too (a second v1
            signature).
    """

    id: UUID
    secret: str
    previous_secret_expires_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        secret = self.secret

        previous_secret_expires_at = self.previous_secret_expires_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "secret": secret,
                "previous_secret_expires_at": previous_secret_expires_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = UUID(d.pop("id"))

        secret = d.pop("secret")

        previous_secret_expires_at = datetime.datetime.fromisoformat(d.pop("previous_secret_expires_at"))

        webhook_secret_out = cls(
            id=id,
            secret=secret,
            previous_secret_expires_at=previous_secret_expires_at,
        )

        webhook_secret_out.additional_properties = d
        return webhook_secret_out

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
