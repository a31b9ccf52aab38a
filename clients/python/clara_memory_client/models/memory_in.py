from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.memory_in_source import MemoryInSource
from ..models.memory_in_type import MemoryInType
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.memory_in_entity_labels import MemoryInEntityLabels
    from ..models.memory_in_metadata import MemoryInMetadata
    from ..models.memory_in_subtype import MemoryInSubtype


T = TypeVar("T", bound="MemoryIn")


@_attrs_define
class MemoryIn:
    """
    Attributes:
        namespace (list[str]):
        content (str):
        key (None | str | Unset):
        type_ (MemoryInType | Unset):  Default: MemoryInType.OTHER.
        memory_key (str | Unset):  Default: ''.
        metadata (MemoryInMetadata | Unset):
        entity_refs (list[str] | Unset):
        entity_labels (MemoryInEntityLabels | Unset):
        subtype (MemoryInSubtype | Unset):
        importance (int | None | Unset):
        pinned (bool | Unset):  Default: False.
        persona (None | str | Unset):
        confidence (float | Unset):  Default: 1.0.
        ttl_minutes (float | None | Unset): Omit for the type's default; null keeps it until forgotten.
        source (MemoryInSource | Unset):  Default: MemoryInSource.TOOL.
    """

    namespace: list[str]
    content: str
    key: None | str | Unset = UNSET
    type_: MemoryInType | Unset = MemoryInType.OTHER
    memory_key: str | Unset = ""
    metadata: MemoryInMetadata | Unset = UNSET
    entity_refs: list[str] | Unset = UNSET
    entity_labels: MemoryInEntityLabels | Unset = UNSET
    subtype: MemoryInSubtype | Unset = UNSET
    importance: int | None | Unset = UNSET
    pinned: bool | Unset = False
    persona: None | str | Unset = UNSET
    confidence: float | Unset = 1.0
    ttl_minutes: float | None | Unset = UNSET
    source: MemoryInSource | Unset = MemoryInSource.TOOL
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        namespace = self.namespace

        content = self.content

        key: None | str | Unset
        if isinstance(self.key, Unset):
            key = UNSET
        else:
            key = self.key

        type_: str | Unset = UNSET
        if not isinstance(self.type_, Unset):
            type_ = self.type_.value

        memory_key = self.memory_key

        metadata: dict[str, Any] | Unset = UNSET
        if not isinstance(self.metadata, Unset):
            metadata = self.metadata.to_dict()

        entity_refs: list[str] | Unset = UNSET
        if not isinstance(self.entity_refs, Unset):
            entity_refs = self.entity_refs

        entity_labels: dict[str, Any] | Unset = UNSET
        if not isinstance(self.entity_labels, Unset):
            entity_labels = self.entity_labels.to_dict()

        subtype: dict[str, Any] | Unset = UNSET
        if not isinstance(self.subtype, Unset):
            subtype = self.subtype.to_dict()

        importance: int | None | Unset
        if isinstance(self.importance, Unset):
            importance = UNSET
        else:
            importance = self.importance

        pinned = self.pinned

        persona: None | str | Unset
        if isinstance(self.persona, Unset):
            persona = UNSET
        else:
            persona = self.persona

        confidence = self.confidence

        ttl_minutes: float | None | Unset
        if isinstance(self.ttl_minutes, Unset):
            ttl_minutes = UNSET
        else:
            ttl_minutes = self.ttl_minutes

        source: str | Unset = UNSET
        if not isinstance(self.source, Unset):
            source = self.source.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "namespace": namespace,
                "content": content,
            }
        )
        if key is not UNSET:
            field_dict["key"] = key
        if type_ is not UNSET:
            field_dict["type"] = type_
        if memory_key is not UNSET:
            field_dict["memory_key"] = memory_key
        if metadata is not UNSET:
            field_dict["metadata"] = metadata
        if entity_refs is not UNSET:
            field_dict["entity_refs"] = entity_refs
        if entity_labels is not UNSET:
            field_dict["entity_labels"] = entity_labels
        if subtype is not UNSET:
            field_dict["subtype"] = subtype
        if importance is not UNSET:
            field_dict["importance"] = importance
        if pinned is not UNSET:
            field_dict["pinned"] = pinned
        if persona is not UNSET:
            field_dict["persona"] = persona
        if confidence is not UNSET:
            field_dict["confidence"] = confidence
        if ttl_minutes is not UNSET:
            field_dict["ttl_minutes"] = ttl_minutes
        if source is not UNSET:
            field_dict["source"] = source

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.memory_in_entity_labels import MemoryInEntityLabels
        from ..models.memory_in_metadata import MemoryInMetadata
        from ..models.memory_in_subtype import MemoryInSubtype

        d = dict(src_dict)
        namespace = cast(list[str], d.pop("namespace"))

        content = d.pop("content")

        def _parse_key(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        key = _parse_key(d.pop("key", UNSET))

        _type_ = d.pop("type", UNSET)
        type_: MemoryInType | Unset
        if isinstance(_type_, Unset):
            type_ = UNSET
        else:
            type_ = MemoryInType(_type_)

        memory_key = d.pop("memory_key", UNSET)

        _metadata = d.pop("metadata", UNSET)
        metadata: MemoryInMetadata | Unset
        if isinstance(_metadata, Unset):
            metadata = UNSET
        else:
            metadata = MemoryInMetadata.from_dict(_metadata)

        entity_refs = cast(list[str], d.pop("entity_refs", UNSET))

        _entity_labels = d.pop("entity_labels", UNSET)
        entity_labels: MemoryInEntityLabels | Unset
        if isinstance(_entity_labels, Unset):
            entity_labels = UNSET
        else:
            entity_labels = MemoryInEntityLabels.from_dict(_entity_labels)

        _subtype = d.pop("subtype", UNSET)
        subtype: MemoryInSubtype | Unset
        if isinstance(_subtype, Unset):
            subtype = UNSET
        else:
            subtype = MemoryInSubtype.from_dict(_subtype)

        def _parse_importance(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        importance = _parse_importance(d.pop("importance", UNSET))

        pinned = d.pop("pinned", UNSET)

        def _parse_persona(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        persona = _parse_persona(d.pop("persona", UNSET))

        confidence = d.pop("confidence", UNSET)

        def _parse_ttl_minutes(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        ttl_minutes = _parse_ttl_minutes(d.pop("ttl_minutes", UNSET))

        _source = d.pop("source", UNSET)
        source: MemoryInSource | Unset
        if isinstance(_source, Unset):
            source = UNSET
        else:
            source = MemoryInSource(_source)

        memory_in = cls(
            namespace=namespace,
            content=content,
            key=key,
            type_=type_,
            memory_key=memory_key,
            metadata=metadata,
            entity_refs=entity_refs,
            entity_labels=entity_labels,
            subtype=subtype,
            importance=importance,
            pinned=pinned,
            persona=persona,
            confidence=confidence,
            ttl_minutes=ttl_minutes,
            source=source,
        )

        memory_in.additional_properties = d
        return memory_in

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
