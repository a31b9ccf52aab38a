from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.session_out_status import SessionOutStatus

T = TypeVar("T", bound="SessionOut")


@_attrs_define
class SessionOut:
    """
    Attributes:
        session_id (UUID):
        user_id (None | UUID):
        status (SessionOutStatus):
        created_at (datetime.datetime):
        last_activity_at (datetime.datetime):
        message_count (int):
        ended_at (datetime.datetime | None):
        dominant_emotion (None | str):
        escalation_triggered (bool):
    """

    session_id: UUID
    user_id: None | UUID
    status: SessionOutStatus
    created_at: datetime.datetime
    last_activity_at: datetime.datetime
    message_count: int
    ended_at: datetime.datetime | None
    dominant_emotion: None | str
    escalation_triggered: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        session_id = str(self.session_id)

        user_id: None | str
        if isinstance(self.user_id, UUID):
            user_id = str(self.user_id)
        else:
            user_id = self.user_id

        status = self.status.value

        created_at = self.created_at.isoformat()

        last_activity_at = self.last_activity_at.isoformat()

        message_count = self.message_count

        ended_at: None | str
        if isinstance(self.ended_at, datetime.datetime):
            ended_at = self.ended_at.isoformat()
        else:
            ended_at = self.ended_at

        dominant_emotion: None | str
        dominant_emotion = self.dominant_emotion

        escalation_triggered = self.escalation_triggered

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "session_id": session_id,
                "user_id": user_id,
                "status": status,
                "created_at": created_at,
                "last_activity_at": last_activity_at,
                "message_count": message_count,
                "ended_at": ended_at,
                "dominant_emotion": dominant_emotion,
                "escalation_triggered": escalation_triggered,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        session_id = UUID(d.pop("session_id"))

        def _parse_user_id(data: object) -> None | UUID:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                user_id_type_0 = UUID(data)

                return user_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UUID, data)

        user_id = _parse_user_id(d.pop("user_id"))

        status = SessionOutStatus(d.pop("status"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        last_activity_at = datetime.datetime.fromisoformat(d.pop("last_activity_at"))

        message_count = d.pop("message_count")

        def _parse_ended_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                ended_at_type_0 = datetime.datetime.fromisoformat(data)

                return ended_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        ended_at = _parse_ended_at(d.pop("ended_at"))

        def _parse_dominant_emotion(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        dominant_emotion = _parse_dominant_emotion(d.pop("dominant_emotion"))

        escalation_triggered = d.pop("escalation_triggered")

        session_out = cls(
            session_id=session_id,
            user_id=user_id,
            status=status,
            created_at=created_at,
            last_activity_at=last_activity_at,
            message_count=message_count,
            ended_at=ended_at,
            dominant_emotion=dominant_emotion,
            escalation_triggered=escalation_triggered,
        )

        session_out.additional_properties = d
        return session_out

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
