from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.emotion_in import EmotionIn
    from ..models.narrative_in import NarrativeIn


T = TypeVar("T", bound="ExchangeIn")


@_attrs_define
class ExchangeIn:
    """
    Attributes:
        user_message (str):
        assistant_message (str): The reply as said. Content blocks are accepted too; reasoning blocks and <think> tags
            are removed before storage.
        idempotency_key (None | str | Unset):
        emotion (EmotionIn | None | Unset):
        intent (None | str | Unset):
        narrative (NarrativeIn | None | Unset):
        processing_time_ms (int | None | Unset):
        escalation (bool | Unset):  Default: False.
        occurred_at (datetime.datetime | None | Unset):
        channel (None | str | Unset):
    """

    user_message: str
    assistant_message: str
    idempotency_key: None | str | Unset = UNSET
    emotion: EmotionIn | None | Unset = UNSET
    intent: None | str | Unset = UNSET
    narrative: NarrativeIn | None | Unset = UNSET
    processing_time_ms: int | None | Unset = UNSET
    escalation: bool | Unset = False
    occurred_at: datetime.datetime | None | Unset = UNSET
    channel: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.emotion_in import EmotionIn
        from ..models.narrative_in import NarrativeIn

        user_message = self.user_message

        assistant_message = self.assistant_message

        idempotency_key: None | str | Unset
        if isinstance(self.idempotency_key, Unset):
            idempotency_key = UNSET
        else:
            idempotency_key = self.idempotency_key

        emotion: dict[str, Any] | None | Unset
        if isinstance(self.emotion, Unset):
            emotion = UNSET
        elif isinstance(self.emotion, EmotionIn):
            emotion = self.emotion.to_dict()
        else:
            emotion = self.emotion

        intent: None | str | Unset
        if isinstance(self.intent, Unset):
            intent = UNSET
        else:
            intent = self.intent

        narrative: dict[str, Any] | None | Unset
        if isinstance(self.narrative, Unset):
            narrative = UNSET
        elif isinstance(self.narrative, NarrativeIn):
            narrative = self.narrative.to_dict()
        else:
            narrative = self.narrative

        processing_time_ms: int | None | Unset
        if isinstance(self.processing_time_ms, Unset):
            processing_time_ms = UNSET
        else:
            processing_time_ms = self.processing_time_ms

        escalation = self.escalation

        occurred_at: None | str | Unset
        if isinstance(self.occurred_at, Unset):
            occurred_at = UNSET
        elif isinstance(self.occurred_at, datetime.datetime):
            occurred_at = self.occurred_at.isoformat()
        else:
            occurred_at = self.occurred_at

        channel: None | str | Unset
        if isinstance(self.channel, Unset):
            channel = UNSET
        else:
            channel = self.channel

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "user_message": user_message,
                "assistant_message": assistant_message,
            }
        )
        if idempotency_key is not UNSET:
            field_dict["idempotency_key"] = idempotency_key
        if emotion is not UNSET:
            field_dict["emotion"] = emotion
        if intent is not UNSET:
            field_dict["intent"] = intent
        if narrative is not UNSET:
            field_dict["narrative"] = narrative
        if processing_time_ms is not UNSET:
            field_dict["processing_time_ms"] = processing_time_ms
        if escalation is not UNSET:
            field_dict["escalation"] = escalation
        if occurred_at is not UNSET:
            field_dict["occurred_at"] = occurred_at
        if channel is not UNSET:
            field_dict["channel"] = channel

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.emotion_in import EmotionIn
        from ..models.narrative_in import NarrativeIn

        d = dict(src_dict)
        user_message = d.pop("user_message")

        assistant_message = d.pop("assistant_message")

        def _parse_idempotency_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        idempotency_key = _parse_idempotency_key(d.pop("idempotency_key", UNSET))

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

        def _parse_intent(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        intent = _parse_intent(d.pop("intent", UNSET))

        def _parse_narrative(data: object) -> NarrativeIn | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                narrative_type_0 = NarrativeIn.from_dict(data)

                return narrative_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(NarrativeIn | None | Unset, data)

        narrative = _parse_narrative(d.pop("narrative", UNSET))

        def _parse_processing_time_ms(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        processing_time_ms = _parse_processing_time_ms(d.pop("processing_time_ms", UNSET))

        escalation = d.pop("escalation", UNSET)

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

        def _parse_channel(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        channel = _parse_channel(d.pop("channel", UNSET))

        exchange_in = cls(
            user_message=user_message,
            assistant_message=assistant_message,
            idempotency_key=idempotency_key,
            emotion=emotion,
            intent=intent,
            narrative=narrative,
            processing_time_ms=processing_time_ms,
            escalation=escalation,
            occurred_at=occurred_at,
            channel=channel,
        )

        exchange_in.additional_properties = d
        return exchange_in

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
