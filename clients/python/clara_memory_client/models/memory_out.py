from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.memory_out_source import MemoryOutSource
from ..models.memory_out_status import MemoryOutStatus
from ..models.memory_out_type import MemoryOutType

if TYPE_CHECKING:
    from ..models.memory_out_entity_labels import MemoryOutEntityLabels
    from ..models.memory_out_metadata import MemoryOutMetadata
    from ..models.memory_out_subtype import MemoryOutSubtype


T = TypeVar("T", bound="MemoryOut")


@_attrs_define
class MemoryOut:
    """
    Attributes:
        id (UUID):
        namespace (list[str]):
        key (str):
        content (str):
        type_ (MemoryOutType):
        metadata (MemoryOutMetadata):
        entity_refs (list[str]):
        entity_labels (MemoryOutEntityLabels):
        subtype (MemoryOutSubtype):
        importance (int):
        pinned (bool):
        memory_key (str):
        source (MemoryOutSource):
        status (MemoryOutStatus):
        confirmed (bool):
        confidence (float):
        supersedes_id (None | UUID):
        expires_at (datetime.datetime | None):
        last_used_at (datetime.datetime | None):
        use_count (int):
        persona (None | str):
        created_at (datetime.datetime):
        updated_at (datetime.datetime):
    """

    id: UUID
    namespace: list[str]
    key: str
    content: str
    type_: MemoryOutType
    metadata: MemoryOutMetadata
    entity_refs: list[str]
    entity_labels: MemoryOutEntityLabels
    subtype: MemoryOutSubtype
    importance: int
    pinned: bool
    memory_key: str
    source: MemoryOutSource
    status: MemoryOutStatus
    confirmed: bool
    confidence: float
    supersedes_id: None | UUID
    expires_at: datetime.datetime | None
    last_used_at: datetime.datetime | None
    use_count: int
    persona: None | str
    created_at: datetime.datetime
    updated_at: datetime.datetime
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = str(self.id)

        namespace = self.namespace

        key = self.key

        content = self.content

        type_ = self.type_.value

        metadata = self.metadata.to_dict()

        entity_refs = self.entity_refs

        entity_labels = self.entity_labels.to_dict()

        subtype = self.subtype.to_dict()

        importance = self.importance

        pinned = self.pinned

        memory_key = self.memory_key

        source = self.source.value

        status = self.status.value

        confirmed = self.confirmed

        confidence = self.confidence

        supersedes_id: None | str
        if isinstance(self.supersedes_id, UUID):
            supersedes_id = str(self.supersedes_id)
        else:
            supersedes_id = self.supersedes_id

        expires_at: None | str
        if isinstance(self.expires_at, datetime.datetime):
            expires_at = self.expires_at.isoformat()
        else:
            expires_at = self.expires_at

        last_used_at: None | str
        if isinstance(self.last_used_at, datetime.datetime):
            last_used_at = self.last_used_at.isoformat()
        else:
            last_used_at = self.last_used_at

        use_count = self.use_count

        persona: None | str
        persona = self.persona

        created_at = self.created_at.isoformat()

        updated_at = self.updated_at.isoformat()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "namespace": namespace,
                "key": key,
                "content": content,
                "type": type_,
                "metadata": metadata,
                "entity_refs": entity_refs,
                "entity_labels": entity_labels,
                "subtype": subtype,
                "importance": importance,
                "pinned": pinned,
                "memory_key": memory_key,
                "source": source,
                "status": status,
                "confirmed": confirmed,
                "confidence": confidence,
                "supersedes_id": supersedes_id,
                "expires_at": expires_at,
                "last_used_at": last_used_at,
                "use_count": use_count,
                "persona": persona,
                "created_at": created_at,
                "updated_at": updated_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.memory_out_entity_labels import MemoryOutEntityLabels
        from ..models.memory_out_metadata import MemoryOutMetadata
        from ..models.memory_out_subtype import MemoryOutSubtype

        d = dict(src_dict)
        id = UUID(d.pop("id"))

        namespace = cast(list[str], d.pop("namespace"))

        key = d.pop("key")

        content = d.pop("content")

        type_ = MemoryOutType(d.pop("type"))

        metadata = MemoryOutMetadata.from_dict(d.pop("metadata"))

        entity_refs = cast(list[str], d.pop("entity_refs"))

        entity_labels = MemoryOutEntityLabels.from_dict(d.pop("entity_labels"))

        subtype = MemoryOutSubtype.from_dict(d.pop("subtype"))

        importance = d.pop("importance")

        pinned = d.pop("pinned")

        memory_key = d.pop("memory_key")

        source = MemoryOutSource(d.pop("source"))

        status = MemoryOutStatus(d.pop("status"))

        confirmed = d.pop("confirmed")

        confidence = d.pop("confidence")

        def _parse_supersedes_id(data: object) -> None | UUID:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                supersedes_id_type_0 = UUID(data)

                return supersedes_id_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | UUID, data)

        supersedes_id = _parse_supersedes_id(d.pop("supersedes_id"))

        def _parse_expires_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                expires_at_type_0 = datetime.datetime.fromisoformat(data)

                return expires_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        expires_at = _parse_expires_at(d.pop("expires_at"))

        def _parse_last_used_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_used_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_used_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        last_used_at = _parse_last_used_at(d.pop("last_used_at"))

        use_count = d.pop("use_count")

        def _parse_persona(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        persona = _parse_persona(d.pop("persona"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        updated_at = datetime.datetime.fromisoformat(d.pop("updated_at"))

        memory_out = cls(
            id=id,
            namespace=namespace,
            key=key,
            content=content,
            type_=type_,
            metadata=metadata,
            entity_refs=entity_refs,
            entity_labels=entity_labels,
            subtype=subtype,
            importance=importance,
            pinned=pinned,
            memory_key=memory_key,
            source=source,
            status=status,
            confirmed=confirmed,
            confidence=confidence,
            supersedes_id=supersedes_id,
            expires_at=expires_at,
            last_used_at=last_used_at,
            use_count=use_count,
            persona=persona,
            created_at=created_at,
            updated_at=updated_at,
        )

        memory_out.additional_properties = d
        return memory_out

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
