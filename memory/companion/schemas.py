"""Shapes of the companion's API: the per-turn context."""

from ninja import Schema


class LLMMessageOut(Schema):
    role: str
    content: str


class ContextNarrativeOut(Schema):
    id: str
    mode: str
    text: str
    category: str
    theme_tags: list[str]


class AnalysisOut(Schema):
    is_repeat: bool
    repeat_count: int
    question_type: str
    cross_session_repeat_count: int
    emotion: str
    distress_score: float
    trajectory: str
    window_size: int
    escalate: bool
    escalation_reason: str | None
    chronic_repetition_pattern: bool


class ContextOut(Schema):
    system_prompt: str
    messages: list[LLMMessageOut]
    max_tokens: int
    narrative: ContextNarrativeOut | None
    analysis: AnalysisOut
