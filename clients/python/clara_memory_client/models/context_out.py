from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.analysis_out import AnalysisOut
    from ..models.context_narrative_out import ContextNarrativeOut
    from ..models.llm_message_out import LLMMessageOut


T = TypeVar("T", bound="ContextOut")


@_attrs_define
class ContextOut:
    """
    Attributes:
        system_prompt (str):
        messages (list[LLMMessageOut]):
        max_tokens (int):
        narrative (ContextNarrativeOut | None):
        analysis (AnalysisOut):
    """

    system_prompt: str
    messages: list[LLMMessageOut]
    max_tokens: int
    narrative: ContextNarrativeOut | None
    analysis: AnalysisOut
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.context_narrative_out import ContextNarrativeOut

        system_prompt = self.system_prompt

        messages = []
        for messages_item_data in self.messages:
            messages_item = messages_item_data.to_dict()
            messages.append(messages_item)

        max_tokens = self.max_tokens

        narrative: dict[str, Any] | None
        if isinstance(self.narrative, ContextNarrativeOut):
            narrative = self.narrative.to_dict()
        else:
            narrative = self.narrative

        analysis = self.analysis.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "system_prompt": system_prompt,
                "messages": messages,
                "max_tokens": max_tokens,
                "narrative": narrative,
                "analysis": analysis,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.analysis_out import AnalysisOut
        from ..models.context_narrative_out import ContextNarrativeOut
        from ..models.llm_message_out import LLMMessageOut

        d = dict(src_dict)
        system_prompt = d.pop("system_prompt")

        messages = []
        _messages = d.pop("messages")
        for messages_item_data in _messages:
            messages_item = LLMMessageOut.from_dict(messages_item_data)

            messages.append(messages_item)

        max_tokens = d.pop("max_tokens")

        def _parse_narrative(data: object) -> ContextNarrativeOut | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                narrative_type_0 = ContextNarrativeOut.from_dict(data)

                return narrative_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ContextNarrativeOut | None, data)

        narrative = _parse_narrative(d.pop("narrative"))

        analysis = AnalysisOut.from_dict(d.pop("analysis"))

        context_out = cls(
            system_prompt=system_prompt,
            messages=messages,
            max_tokens=max_tokens,
            narrative=narrative,
            analysis=analysis,
        )

        context_out.additional_properties = d
        return context_out

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
