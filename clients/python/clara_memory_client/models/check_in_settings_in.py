from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="CheckInSettingsIn")


@_attrs_define
class CheckInSettingsIn:
    """
    Attributes:
        enabled (bool):
        times (list[str]): Local times of day in the person's time zone, "HH:MM" (24-hour).
        night_start (int): Local hour night begins; no check-ins until night_end.
        night_end (int):
        max_unanswered (int | None | Unset): Stop after this many unanswered check-ins in a row, until the person talks
            again (1-10; unchanged when left out).
    """

    enabled: bool
    times: list[str]
    night_start: int
    night_end: int
    max_unanswered: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        enabled = self.enabled

        times = self.times

        night_start = self.night_start

        night_end = self.night_end

        max_unanswered: int | None | Unset
        if isinstance(self.max_unanswered, Unset):
            max_unanswered = UNSET
        else:
            max_unanswered = self.max_unanswered

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "enabled": enabled,
                "times": times,
                "night_start": night_start,
                "night_end": night_end,
            }
        )
        if max_unanswered is not UNSET:
            field_dict["max_unanswered"] = max_unanswered

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        enabled = d.pop("enabled")

        times = cast(list[str], d.pop("times"))

        night_start = d.pop("night_start")

        night_end = d.pop("night_end")

        def _parse_max_unanswered(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        max_unanswered = _parse_max_unanswered(d.pop("max_unanswered", UNSET))

        check_in_settings_in = cls(
            enabled=enabled,
            times=times,
            night_start=night_start,
            night_end=night_end,
            max_unanswered=max_unanswered,
        )

        check_in_settings_in.additional_properties = d
        return check_in_settings_in

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
