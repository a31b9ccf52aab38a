from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ExchangePendingOut")


@_attrs_define
class ExchangePendingOut:
    """
    Attributes:
        detail (str):
        idempotency_key (str):
        status (Literal['pending'] | Unset):  Default: 'pending'.
    """

    detail: str
    idempotency_key: str
    status: Literal["pending"] | Unset = "pending"
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        detail = self.detail

        idempotency_key = self.idempotency_key

        status = self.status

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "detail": detail,
                "idempotency_key": idempotency_key,
            }
        )
        if status is not UNSET:
            field_dict["status"] = status

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        detail = d.pop("detail")

        idempotency_key = d.pop("idempotency_key")

        status = cast(Literal["pending"] | Unset, d.pop("status", UNSET))
        if status != "pending" and not isinstance(status, Unset):
            raise ValueError(f"status must match const 'pending', got '{status}'")

        exchange_pending_out = cls(
            detail=detail,
            idempotency_key=idempotency_key,
            status=status,
        )

        exchange_pending_out.additional_properties = d
        return exchange_pending_out

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
