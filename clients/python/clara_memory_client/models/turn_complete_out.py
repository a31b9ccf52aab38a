from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="TurnCompleteOut")


@_attrs_define
class TurnCompleteOut:
    """
    Attributes:
        user_message_id (UUID):
        assistant_message_id (UUID):
        waiting (int):
    """

    user_message_id: UUID
    assistant_message_id: UUID
    waiting: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        user_message_id = str(self.user_message_id)

        assistant_message_id = str(self.assistant_message_id)

        waiting = self.waiting

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "user_message_id": user_message_id,
                "assistant_message_id": assistant_message_id,
                "waiting": waiting,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        user_message_id = UUID(d.pop("user_message_id"))

        assistant_message_id = UUID(d.pop("assistant_message_id"))

        waiting = d.pop("waiting")

        turn_complete_out = cls(
            user_message_id=user_message_id,
            assistant_message_id=assistant_message_id,
            waiting=waiting,
        )

        turn_complete_out.additional_properties = d
        return turn_complete_out

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
