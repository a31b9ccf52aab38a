from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.upsert_out_action import UpsertOutAction

if TYPE_CHECKING:
    from ..models.memory_out import MemoryOut


T = TypeVar("T", bound="UpsertOut")


@_attrs_define
class UpsertOut:
    """
    Attributes:
        action (UpsertOutAction):
        memory (MemoryOut):
    """

    action: UpsertOutAction
    memory: MemoryOut
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        action = self.action.value

        memory = self.memory.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "action": action,
                "memory": memory,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.memory_out import MemoryOut

        d = dict(src_dict)
        action = UpsertOutAction(d.pop("action"))

        memory = MemoryOut.from_dict(d.pop("memory"))

        upsert_out = cls(
            action=action,
            memory=memory,
        )

        upsert_out.additional_properties = d
        return upsert_out

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
