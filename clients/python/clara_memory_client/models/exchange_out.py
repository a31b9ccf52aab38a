from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.stored_message_out import StoredMessageOut


T = TypeVar("T", bound="ExchangeOut")


@_attrs_define
class ExchangeOut:
    """
    Attributes:
        user_message (StoredMessageOut):
        assistant_message (StoredMessageOut):
    """

    user_message: StoredMessageOut
    assistant_message: StoredMessageOut
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        user_message = self.user_message.to_dict()

        assistant_message = self.assistant_message.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "user_message": user_message,
                "assistant_message": assistant_message,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.stored_message_out import StoredMessageOut

        d = dict(src_dict)
        user_message = StoredMessageOut.from_dict(d.pop("user_message"))

        assistant_message = StoredMessageOut.from_dict(d.pop("assistant_message"))

        exchange_out = cls(
            user_message=user_message,
            assistant_message=assistant_message,
        )

        exchange_out.additional_properties = d
        return exchange_out

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
