from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="NamespacesIn")


@_attrs_define
class NamespacesIn:
    """
    Attributes:
        prefix (list[str] | Unset):
        suffix (list[str] | Unset):
        max_depth (int | None | Unset):
        limit (int | Unset):  Default: 100.
        offset (int | Unset):  Default: 0.
    """

    prefix: list[str] | Unset = UNSET
    suffix: list[str] | Unset = UNSET
    max_depth: int | None | Unset = UNSET
    limit: int | Unset = 100
    offset: int | Unset = 0
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        prefix: list[str] | Unset = UNSET
        if not isinstance(self.prefix, Unset):
            prefix = self.prefix

        suffix: list[str] | Unset = UNSET
        if not isinstance(self.suffix, Unset):
            suffix = self.suffix

        max_depth: int | None | Unset
        if isinstance(self.max_depth, Unset):
            max_depth = UNSET
        else:
            max_depth = self.max_depth

        limit = self.limit

        offset = self.offset

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if prefix is not UNSET:
            field_dict["prefix"] = prefix
        if suffix is not UNSET:
            field_dict["suffix"] = suffix
        if max_depth is not UNSET:
            field_dict["max_depth"] = max_depth
        if limit is not UNSET:
            field_dict["limit"] = limit
        if offset is not UNSET:
            field_dict["offset"] = offset

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        prefix = cast(list[str], d.pop("prefix", UNSET))

        suffix = cast(list[str], d.pop("suffix", UNSET))

        def _parse_max_depth(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_depth = _parse_max_depth(d.pop("max_depth", UNSET))

        limit = d.pop("limit", UNSET)

        offset = d.pop("offset", UNSET)

        namespaces_in = cls(
            prefix=prefix,
            suffix=suffix,
            max_depth=max_depth,
            limit=limit,
            offset=offset,
        )

        namespaces_in.additional_properties = d
        return namespaces_in

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
