from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.emotion_record_out import EmotionRecordOut
    from ..models.query_out_caregiver_context import QueryOutCaregiverContext
    from ..models.window_message_out import WindowMessageOut


T = TypeVar("T", bound="QueryOut")


@_attrs_define
class QueryOut:
    """
    Attributes:
        is_repeat (bool):
        repeat_count (int):
        question_type (str):
        cross_session_repeat_count (int):
        window_size (int):
        conversation_window (list[WindowMessageOut]):
        emotion_history (list[EmotionRecordOut]):
        used_narrative_ids (list[str]):
        caregiver_context (QueryOutCaregiverContext):
        display_name (str):
    """

    is_repeat: bool
    repeat_count: int
    question_type: str
    cross_session_repeat_count: int
    window_size: int
    conversation_window: list[WindowMessageOut]
    emotion_history: list[EmotionRecordOut]
    used_narrative_ids: list[str]
    caregiver_context: QueryOutCaregiverContext
    display_name: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        is_repeat = self.is_repeat

        repeat_count = self.repeat_count

        question_type = self.question_type

        cross_session_repeat_count = self.cross_session_repeat_count

        window_size = self.window_size

        conversation_window = []
        for conversation_window_item_data in self.conversation_window:
            conversation_window_item = conversation_window_item_data.to_dict()
            conversation_window.append(conversation_window_item)

        emotion_history = []
        for emotion_history_item_data in self.emotion_history:
            emotion_history_item = emotion_history_item_data.to_dict()
            emotion_history.append(emotion_history_item)

        used_narrative_ids = self.used_narrative_ids

        caregiver_context = self.caregiver_context.to_dict()

        display_name = self.display_name

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "is_repeat": is_repeat,
                "repeat_count": repeat_count,
                "question_type": question_type,
                "cross_session_repeat_count": cross_session_repeat_count,
                "window_size": window_size,
                "conversation_window": conversation_window,
                "emotion_history": emotion_history,
                "used_narrative_ids": used_narrative_ids,
                "caregiver_context": caregiver_context,
                "display_name": display_name,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.emotion_record_out import EmotionRecordOut
        from ..models.query_out_caregiver_context import QueryOutCaregiverContext
        from ..models.window_message_out import WindowMessageOut

        d = dict(src_dict)
        is_repeat = d.pop("is_repeat")

        repeat_count = d.pop("repeat_count")

        question_type = d.pop("question_type")

        cross_session_repeat_count = d.pop("cross_session_repeat_count")

        window_size = d.pop("window_size")

        conversation_window = []
        _conversation_window = d.pop("conversation_window")
        for conversation_window_item_data in _conversation_window:
            conversation_window_item = WindowMessageOut.from_dict(conversation_window_item_data)

            conversation_window.append(conversation_window_item)

        emotion_history = []
        _emotion_history = d.pop("emotion_history")
        for emotion_history_item_data in _emotion_history:
            emotion_history_item = EmotionRecordOut.from_dict(emotion_history_item_data)

            emotion_history.append(emotion_history_item)

        used_narrative_ids = cast(list[str], d.pop("used_narrative_ids"))

        caregiver_context = QueryOutCaregiverContext.from_dict(d.pop("caregiver_context"))

        display_name = d.pop("display_name")

        query_out = cls(
            is_repeat=is_repeat,
            repeat_count=repeat_count,
            question_type=question_type,
            cross_session_repeat_count=cross_session_repeat_count,
            window_size=window_size,
            conversation_window=conversation_window,
            emotion_history=emotion_history,
            used_narrative_ids=used_narrative_ids,
            caregiver_context=caregiver_context,
            display_name=display_name,
        )

        query_out.additional_properties = d
        return query_out

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
