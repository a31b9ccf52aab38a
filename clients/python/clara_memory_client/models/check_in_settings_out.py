from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="CheckInSettingsOut")


@_attrs_define
class CheckInSettingsOut:
    """
    Attributes:
        person_id (UUID):
        enabled (bool):
        times (list[str]):
        night_start (int):
        night_end (int):
        max_unanswered (int):
    """

    person_id: UUID
    enabled: bool
    times: list[str]
    night_start: int
    night_end: int
    max_unanswered: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        person_id = str(self.person_id)

        enabled = self.enabled

        times = self.times

        night_start = self.night_start

        night_end = self.night_end

        max_unanswered = self.max_unanswered

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "person_id": person_id,
                "enabled": enabled,
                "times": times,
                "night_start": night_start,
                "night_end": night_end,
                "max_unanswered": max_unanswered,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        person_id = UUID(d.pop("person_id"))

        enabled = d.pop("enabled")

        times = cast(list[str], d.pop("times"))

        night_start = d.pop("night_start")

        night_end = d.pop("night_end")

        max_unanswered = d.pop("max_unanswered")

        check_in_settings_out = cls(
            person_id=person_id,
            enabled=enabled,
            times=times,
            night_start=night_start,
            night_end=night_end,
            max_unanswered=max_unanswered,
        )

        check_in_settings_out.additional_properties = d
        return check_in_settings_out

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
