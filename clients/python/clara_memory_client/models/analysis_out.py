from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="AnalysisOut")


@_attrs_define
class AnalysisOut:
    """
    Attributes:
        is_repeat (bool):
        repeat_count (int):
        question_type (str):
        cross_session_repeat_count (int):
        emotion (str):
        distress_score (float):
        trajectory (str):
        window_size (int):
        escalate (bool):
        escalation_reason (None | str):
        chronic_repetition_pattern (bool):
    """

    is_repeat: bool
    repeat_count: int
    question_type: str
    cross_session_repeat_count: int
    emotion: str
    distress_score: float
    trajectory: str
    window_size: int
    escalate: bool
    escalation_reason: None | str
    chronic_repetition_pattern: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        is_repeat = self.is_repeat

        repeat_count = self.repeat_count

        question_type = self.question_type

        cross_session_repeat_count = self.cross_session_repeat_count

        emotion = self.emotion

        distress_score = self.distress_score

        trajectory = self.trajectory

        window_size = self.window_size

        escalate = self.escalate

        escalation_reason: None | str
        escalation_reason = self.escalation_reason

        chronic_repetition_pattern = self.chronic_repetition_pattern

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "is_repeat": is_repeat,
                "repeat_count": repeat_count,
                "question_type": question_type,
                "cross_session_repeat_count": cross_session_repeat_count,
                "emotion": emotion,
                "distress_score": distress_score,
                "trajectory": trajectory,
                "window_size": window_size,
                "escalate": escalate,
                "escalation_reason": escalation_reason,
                "chronic_repetition_pattern": chronic_repetition_pattern,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        is_repeat = d.pop("is_repeat")

        repeat_count = d.pop("repeat_count")

        question_type = d.pop("question_type")

        cross_session_repeat_count = d.pop("cross_session_repeat_count")

        emotion = d.pop("emotion")

        distress_score = d.pop("distress_score")

        trajectory = d.pop("trajectory")

        window_size = d.pop("window_size")

        escalate = d.pop("escalate")

        def _parse_escalation_reason(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        escalation_reason = _parse_escalation_reason(d.pop("escalation_reason"))

        chronic_repetition_pattern = d.pop("chronic_repetition_pattern")

        analysis_out = cls(
            is_repeat=is_repeat,
            repeat_count=repeat_count,
            question_type=question_type,
            cross_session_repeat_count=cross_session_repeat_count,
            emotion=emotion,
            distress_score=distress_score,
            trajectory=trajectory,
            window_size=window_size,
            escalate=escalate,
            escalation_reason=escalation_reason,
            chronic_repetition_pattern=chronic_repetition_pattern,
        )

        analysis_out.additional_properties = d
        return analysis_out

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
