from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.outbox_item_out import OutboxItemOut


T = TypeVar("T", bound="OutboxOut")


@_attrs_define
class OutboxOut:
    """
    Attributes:
        check_ins (list[OutboxItemOut]):
    """

    check_ins: list[OutboxItemOut]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        check_ins = []
        for check_ins_item_data in self.check_ins:
            check_ins_item = check_ins_item_data.to_dict()
            check_ins.append(check_ins_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "check_ins": check_ins,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.outbox_item_out import OutboxItemOut

        d = dict(src_dict)
        check_ins = []
        _check_ins = d.pop("check_ins")
        for check_ins_item_data in _check_ins:
            check_ins_item = OutboxItemOut.from_dict(check_ins_item_data)

            check_ins.append(check_ins_item)

        outbox_out = cls(
            check_ins=check_ins,
        )

        outbox_out.additional_properties = d
        return outbox_out

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
