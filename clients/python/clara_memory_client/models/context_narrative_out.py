from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ContextNarrativeOut")


@_attrs_define
class ContextNarrativeOut:
    """
    Attributes:
        id (str):
        mode (str):
        text (str):
        category (str):
        theme_tags (list[str]):
    """

    id: str
    mode: str
    text: str
    category: str
    theme_tags: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        mode = self.mode

        text = self.text

        category = self.category

        theme_tags = self.theme_tags

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "mode": mode,
                "text": text,
                "category": category,
                "theme_tags": theme_tags,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        mode = d.pop("mode")

        text = d.pop("text")

        category = d.pop("category")

        theme_tags = cast(list[str], d.pop("theme_tags"))

        context_narrative_out = cls(
            id=id,
            mode=mode,
            text=text,
            category=category,
            theme_tags=theme_tags,
        )

        context_narrative_out.additional_properties = d
        return context_narrative_out

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
