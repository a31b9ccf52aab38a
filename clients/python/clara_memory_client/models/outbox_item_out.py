from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="OutboxItemOut")


@_attrs_define
class OutboxItemOut:
    """
    Attributes:
        check_in_id (UUID):
        session_id (UUID):
        message_id (UUID):
        sequence_number (int):
        content (str):
        slot (str): The local time it was for, "YYYY-MM-DDTHH:MM".
        sent_at (datetime.datetime):
        delivered (bool):
    """

    check_in_id: UUID
    session_id: UUID
    message_id: UUID
    sequence_number: int
    content: str
    slot: str
    sent_at: datetime.datetime
    delivered: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        check_in_id = str(self.check_in_id)

        session_id = str(self.session_id)

        message_id = str(self.message_id)

        sequence_number = self.sequence_number

        content = self.content

        slot = self.slot

        sent_at = self.sent_at.isoformat()

        delivered = self.delivered

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "check_in_id": check_in_id,
                "session_id": session_id,
                "message_id": message_id,
                "sequence_number": sequence_number,
                "content": content,
                "slot": slot,
                "sent_at": sent_at,
                "delivered": delivered,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        check_in_id = UUID(d.pop("check_in_id"))

        session_id = UUID(d.pop("session_id"))

        message_id = UUID(d.pop("message_id"))

        sequence_number = d.pop("sequence_number")

        content = d.pop("content")

        slot = d.pop("slot")

        sent_at = datetime.datetime.fromisoformat(d.pop("sent_at"))

        delivered = d.pop("delivered")

        outbox_item_out = cls(
            check_in_id=check_in_id,
            session_id=session_id,
            message_id=message_id,
            sequence_number=sequence_number,
            content=content,
            slot=slot,
            sent_at=sent_at,
            delivered=delivered,
        )

        outbox_item_out.additional_properties = d
        return outbox_item_out

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
