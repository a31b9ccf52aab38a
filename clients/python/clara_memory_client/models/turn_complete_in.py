from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.emotion_in import EmotionIn


T = TypeVar("T", bound="TurnCompleteIn")


@_attrs_define
class TurnCompleteIn:
    """
    Attributes:
        assistant_message (str): The reply as said. Content blocks are accepted too; reasoning blocks and <think> tags
            are removed before storage.
        emotion (EmotionIn | None | Unset):
        processing_time_ms (int | None | Unset):
    """

    assistant_message: str
    emotion: EmotionIn | None | Unset = UNSET
    processing_time_ms: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.emotion_in import EmotionIn

        assistant_message = self.assistant_message

        emotion: dict[str, Any] | None | Unset
        if isinstance(self.emotion, Unset):
            emotion = UNSET
        elif isinstance(self.emotion, EmotionIn):
            emotion = self.emotion.to_dict()
        else:
            emotion = self.emotion

        processing_time_ms: int | None | Unset
        if isinstance(self.processing_time_ms, Unset):
            processing_time_ms = UNSET
        else:
            processing_time_ms = self.processing_time_ms

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "assistant_message": assistant_message,
            }
        )
        if emotion is not UNSET:
            field_dict["emotion"] = emotion
        if processing_time_ms is not UNSET:
            field_dict["processing_time_ms"] = processing_time_ms

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.emotion_in import EmotionIn

        d = dict(src_dict)
        assistant_message = d.pop("assistant_message")

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

        def _parse_processing_time_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        processing_time_ms = _parse_processing_time_ms(d.pop("processing_time_ms", UNSET))

        turn_complete_in = cls(
            assistant_message=assistant_message,
            emotion=emotion,
            processing_time_ms=processing_time_ms,
        )

        turn_complete_in.additional_properties = d
        return turn_complete_in

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
