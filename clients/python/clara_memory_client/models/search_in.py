from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.search_in_status import SearchInStatus
from ..models.search_in_types_item import SearchInTypesItem
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.search_in_filter import SearchInFilter


T = TypeVar("T", bound="SearchIn")


@_attrs_define
class SearchIn:
    """
    Attributes:
        prefix (list[str]):
        query (None | str | Unset):
        types (list[SearchInTypesItem] | Unset):
        persona (None | str | Unset):
        confirmed (bool | None | Unset):
        status (SearchInStatus | Unset):  Default: SearchInStatus.ACTIVE.
        filter_ (SearchInFilter | Unset):
        limit (int | Unset):  Default: 10.
        offset (int | Unset):  Default: 0.
        threshold (float | None | Unset):
        entity_cards (bool | Unset):  Default: False.
    """

    prefix: list[str]
    query: None | str | Unset = UNSET
    types: list[SearchInTypesItem] | Unset = UNSET
    persona: None | str | Unset = UNSET
    confirmed: bool | None | Unset = UNSET
    status: SearchInStatus | Unset = SearchInStatus.ACTIVE
    filter_: SearchInFilter | Unset = UNSET
    limit: int | Unset = 10
    offset: int | Unset = 0
    threshold: float | None | Unset = UNSET
    entity_cards: bool | Unset = False
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        prefix = self.prefix

        query: None | str | Unset
        if isinstance(self.query, Unset):
            query = UNSET
        else:
            query = self.query

        types: list[str] | Unset = UNSET
        if not isinstance(self.types, Unset):
            types = []
            for types_item_data in self.types:
                types_item = types_item_data.value
                types.append(types_item)

        persona: None | str | Unset
        if isinstance(self.persona, Unset):
            persona = UNSET
        else:
            persona = self.persona

        confirmed: bool | None | Unset
        if isinstance(self.confirmed, Unset):
            confirmed = UNSET
        else:
            confirmed = self.confirmed

        status: str | Unset = UNSET
        if not isinstance(self.status, Unset):
            status = self.status.value

        filter_: dict[str, Any] | Unset = UNSET
        if not isinstance(self.filter_, Unset):
            filter_ = self.filter_.to_dict()

        limit = self.limit

        offset = self.offset

        threshold: float | None | Unset
        if isinstance(self.threshold, Unset):
            threshold = UNSET
        else:
            threshold = self.threshold

        entity_cards = self.entity_cards

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "prefix": prefix,
            }
        )
        if query is not UNSET:
            field_dict["query"] = query
        if types is not UNSET:
            field_dict["types"] = types
        if persona is not UNSET:
            field_dict["persona"] = persona
        if confirmed is not UNSET:
            field_dict["confirmed"] = confirmed
        if status is not UNSET:
            field_dict["status"] = status
        if filter_ is not UNSET:
            field_dict["filter"] = filter_
        if limit is not UNSET:
            field_dict["limit"] = limit
        if offset is not UNSET:
            field_dict["offset"] = offset
        if threshold is not UNSET:
            field_dict["threshold"] = threshold
        if entity_cards is not UNSET:
            field_dict["entity_cards"] = entity_cards

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.search_in_filter import SearchInFilter

        d = dict(src_dict)
        prefix = cast(list[str], d.pop("prefix"))

        def _parse_query(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        query = _parse_query(d.pop("query", UNSET))

        _types = d.pop("types", UNSET)
        types: list[SearchInTypesItem] | Unset = UNSET
        if _types is not UNSET:
            types = []
            for types_item_data in _types:
                types_item = SearchInTypesItem(types_item_data)

                types.append(types_item)

        def _parse_persona(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        persona = _parse_persona(d.pop("persona", UNSET))

        def _parse_confirmed(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        confirmed = _parse_confirmed(d.pop("confirmed", UNSET))

        _status = d.pop("status", UNSET)
        status: SearchInStatus | Unset
        if isinstance(_status, Unset):
            status = UNSET
        else:
            status = SearchInStatus(_status)

        _filter_ = d.pop("filter", UNSET)
        filter_: SearchInFilter | Unset
        if isinstance(_filter_, Unset):
            filter_ = UNSET
        else:
            filter_ = SearchInFilter.from_dict(_filter_)

        limit = d.pop("limit", UNSET)

        offset = d.pop("offset", UNSET)

        def _parse_threshold(data: object) -> float | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(float | None | Unset, data)

        threshold = _parse_threshold(d.pop("threshold", UNSET))

        entity_cards = d.pop("entity_cards", UNSET)

        search_in = cls(
            prefix=prefix,
            query=query,
            types=types,
            persona=persona,
            confirmed=confirmed,
            status=status,
            filter_=filter_,
            limit=limit,
            offset=offset,
            threshold=threshold,
            entity_cards=entity_cards,
        )

        search_in.additional_properties = d
        return search_in

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
