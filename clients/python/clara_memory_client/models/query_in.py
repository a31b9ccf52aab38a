from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.emotion_in import EmotionIn


T = TypeVar("T", bound="QueryIn")


@_attrs_define
class QueryIn:
    """
    Attributes:
        message (str):
        emotion (EmotionIn | None | Unset):
        occurred_at (datetime.datetime | None | Unset):
    """

    message: str
    emotion: EmotionIn | None | Unset = UNSET
    occurred_at: datetime.datetime | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.emotion_in import EmotionIn

        message = self.message

        emotion: dict[str, Any] | None | Unset
        if isinstance(self.emotion, Unset):
            emotion = UNSET
        elif isinstance(self.emotion, EmotionIn):
            emotion = self.emotion.to_dict()
        else:
            emotion = self.emotion

        occurred_at: None | str | Unset
        if isinstance(self.occurred_at, Unset):
            occurred_at = UNSET
        elif isinstance(self.occurred_at, datetime.datetime):
            occurred_at = self.occurred_at.isoformat()
        else:
            occurred_at = self.occurred_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "message": message,
            }
        )
        if emotion is not UNSET:
            field_dict["emotion"] = emotion
        if occurred_at is not UNSET:
            field_dict["occurred_at"] = occurred_at

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.emotion_in import EmotionIn

        d = dict(src_dict)
        message = d.pop("message")

        def _parse_emotion(data: object) -> EmotionIn | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                emotion_type_0 = EmotionIn.from_dict(data)

                return emotion_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EmotionIn | None | Unset, data)

        emotion = _parse_emotion(d.pop("emotion", UNSET))

        def _parse_occurred_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                occurred_at_type_0 = datetime.datetime.fromisoformat(data)

                return occurred_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        occurred_at = _parse_occurred_at(d.pop("occurred_at", UNSET))

        query_in = cls(
            message=message,
            emotion=emotion,
            occurred_at=occurred_at,
        )

        query_in.additional_properties = d
        return query_in

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
