from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.emotion_in_emotion import EmotionInEmotion
from ..models.emotion_in_trajectory import EmotionInTrajectory

T = TypeVar("T", bound="EmotionIn")


@_attrs_define
class EmotionIn:
    """
    Attributes:
        emotion (EmotionInEmotion):
        confidence (float):
        distress_score (float):
        trajectory (EmotionInTrajectory):
    """

    emotion: EmotionInEmotion
    confidence: float
    distress_score: float
    trajectory: EmotionInTrajectory
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        emotion = self.emotion.value

        confidence = self.confidence

        distress_score = self.distress_score

        trajectory = self.trajectory.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "emotion": emotion,
                "confidence": confidence,
                "distress_score": distress_score,
                "trajectory": trajectory,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        emotion = EmotionInEmotion(d.pop("emotion"))

        confidence = d.pop("confidence")

        distress_score = d.pop("distress_score")

        trajectory = EmotionInTrajectory(d.pop("trajectory"))

        emotion_in = cls(
            emotion=emotion,
            confidence=confidence,
            distress_score=distress_score,
            trajectory=trajectory,
        )

        emotion_in.additional_properties = d
        return emotion_in

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
