from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="MessageOut")


@_attrs_define
class MessageOut:
    """
    Attributes:
        message_id (UUID):
        role (str):
        content (str):
        sequence_number (int):
        timestamp (datetime.datetime):
    """

    message_id: UUID
    role: str
    content: str
    sequence_number: int
    timestamp: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        message_id = str(self.message_id)

        role = self.role

        content = self.content

        sequence_number = self.sequence_number

        timestamp = self.timestamp.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "message_id": message_id,
                "role": role,
                "content": content,
                "sequence_number": sequence_number,
                "timestamp": timestamp,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        message_id = UUID(d.pop("message_id"))

        role = d.pop("role")

        content = d.pop("content")

        sequence_number = d.pop("sequence_number")

        timestamp = datetime.datetime.fromisoformat(d.pop("timestamp"))

        message_out = cls(
            message_id=message_id,
            role=role,
            content=content,
            sequence_number=sequence_number,
            timestamp=timestamp,
        )

        message_out.additional_properties = d
        return message_out

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
