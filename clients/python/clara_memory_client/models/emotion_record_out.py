from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="EmotionRecordOut")


@_attrs_define
class EmotionRecordOut:
    """
    Attributes:
        emotion (str):
        confidence (float):
        distress_score (float):
        trajectory (str):
        timestamp (datetime.datetime):
    """

    emotion: str
    confidence: float
    distress_score: float
    trajectory: str
    timestamp: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        emotion = self.emotion

        confidence = self.confidence

        distress_score = self.distress_score

        trajectory = self.trajectory

        timestamp = self.timestamp.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "emotion": emotion,
                "confidence": confidence,
                "distress_score": distress_score,
                "trajectory": trajectory,
                "timestamp": timestamp,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        emotion = d.pop("emotion")

        confidence = d.pop("confidence")

        distress_score = d.pop("distress_score")

        trajectory = d.pop("trajectory")

        timestamp = datetime.datetime.fromisoformat(d.pop("timestamp"))

        emotion_record_out = cls(
            emotion=emotion,
            confidence=confidence,
            distress_score=distress_score,
            trajectory=trajectory,
            timestamp=timestamp,
        )

        emotion_record_out.additional_properties = d
        return emotion_record_out

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
