"""Contains all the data models used in inputs/outputs"""

from .analysis_out import AnalysisOut
from .call_tool_arguments import CallToolArguments
from .call_tool_response import CallToolResponse
from .check_in_settings_in import CheckInSettingsIn
from .check_in_settings_out import CheckInSettingsOut
from .context_narrative_out import ContextNarrativeOut
from .context_out import ContextOut
from .deleted_out import DeletedOut
from .emotion_in import EmotionIn
from .emotion_in_emotion import EmotionInEmotion
from .emotion_in_trajectory import EmotionInTrajectory
from .emotion_record_out import EmotionRecordOut
from .erase_in import EraseIn
from .erase_person_response import ErasePersonResponse
from .error_item_out import ErrorItemOut
from .error_out import ErrorOut
from .error_out_code import ErrorOutCode
from .exchange_in import ExchangeIn
from .exchange_out import ExchangeOut
from .exchange_pending_out import ExchangePendingOut
from .export_person_fhir_response import ExportPersonFhirResponse
from .export_person_format import ExportPersonFormat
from .forget_in import ForgetIn
from .forget_in_type_type_0 import ForgetInTypeType0
from .list_person_memories_type_type_0 import ListPersonMemoriesTypeType0
from .list_tool_schemas_format import ListToolSchemasFormat
from .list_tool_schemas_response_200_item import ListToolSchemasResponse200Item
from .llm_message_out import LLMMessageOut
from .memory_in import MemoryIn
from .memory_in_entity_labels import MemoryInEntityLabels
from .memory_in_metadata import MemoryInMetadata
from .memory_in_source import MemoryInSource
from .memory_in_subtype import MemoryInSubtype
from .memory_in_type import MemoryInType
from .memory_out import MemoryOut
from .memory_out_entity_labels import MemoryOutEntityLabels
from .memory_out_metadata import MemoryOutMetadata
from .memory_out_source import MemoryOutSource
from .memory_out_status import MemoryOutStatus
from .memory_out_subtype import MemoryOutSubtype
from .memory_out_type import MemoryOutType
from .memory_settings_in import MemorySettingsIn
from .memory_settings_out import MemorySettingsOut
from .message_out import MessageOut
from .messages_out import MessagesOut
from .namespaces_in import NamespacesIn
from .namespaces_out import NamespacesOut
from .narrative_in import NarrativeIn
from .narrative_in_mode import NarrativeInMode
from .outbox_item_out import OutboxItemOut
from .outbox_out import OutboxOut
from .persona_in import PersonaIn
from .persona_out import PersonaOut
from .persona_policy_in import PersonaPolicyIn
from .persona_policy_in_memory_policy import PersonaPolicyInMemoryPolicy
from .persona_policy_out import PersonaPolicyOut
from .query_in import QueryIn
from .query_out import QueryOut
from .query_out_caregiver_context import QueryOutCaregiverContext
from .search_hit_out import SearchHitOut
from .search_in import SearchIn
from .search_in_filter import SearchInFilter
from .search_in_status import SearchInStatus
from .search_in_types_item import SearchInTypesItem
from .search_out import SearchOut
from .session_close_in import SessionCloseIn
from .session_in import SessionIn
from .session_out import SessionOut
from .session_out_status import SessionOutStatus
from .stored_message_out import StoredMessageOut
from .turn_complete_in import TurnCompleteIn
from .turn_complete_out import TurnCompleteOut
from .turn_message_in import TurnMessageIn
from .turn_out import TurnOut
from .turn_out_status import TurnOutStatus
from .upsert_out import UpsertOut
from .upsert_out_action import UpsertOutAction
from .webhook_created_out import WebhookCreatedOut
from .webhook_event import WebhookEvent
from .webhook_in import WebhookIn
from .webhook_out import WebhookOut
from .webhook_secret_out import WebhookSecretOut
from .webhooks_out import WebhooksOut
from .window_message_out import WindowMessageOut

__all__ = (
    "AnalysisOut",
    "CallToolArguments",
    "CallToolResponse",
    "CheckInSettingsIn",
    "CheckInSettingsOut",
    "ContextNarrativeOut",
    "ContextOut",
    "DeletedOut",
    "EmotionIn",
    "EmotionInEmotion",
    "EmotionInTrajectory",
    "EmotionRecordOut",
    "EraseIn",
    "ErasePersonResponse",
    "ErrorItemOut",
    "ErrorOut",
    "ErrorOutCode",
    "ExchangeIn",
    "ExchangeOut",
    "ExchangePendingOut",
    "ExportPersonFhirResponse",
    "ExportPersonFormat",
    "ForgetIn",
    "ForgetInTypeType0",
    "ListPersonMemoriesTypeType0",
    "ListToolSchemasFormat",
    "ListToolSchemasResponse200Item",
    "LLMMessageOut",
    "MemoryIn",
    "MemoryInEntityLabels",
    "MemoryInMetadata",
    "MemoryInSource",
    "MemoryInSubtype",
    "MemoryInType",
    "MemoryOut",
    "MemoryOutEntityLabels",
    "MemoryOutMetadata",
    "MemoryOutSource",
    "MemoryOutStatus",
    "MemoryOutSubtype",
    "MemoryOutType",
    "MemorySettingsIn",
    "MemorySettingsOut",
    "MessageOut",
    "MessagesOut",
    "NamespacesIn",
    "NamespacesOut",
    "NarrativeIn",
    "NarrativeInMode",
    "OutboxItemOut",
    "OutboxOut",
    "PersonaIn",
    "PersonaOut",
    "PersonaPolicyIn",
    "PersonaPolicyInMemoryPolicy",
    "PersonaPolicyOut",
    "QueryIn",
    "QueryOut",
    "QueryOutCaregiverContext",
    "SearchHitOut",
    "SearchIn",
    "SearchInFilter",
    "SearchInStatus",
    "SearchInTypesItem",
    "SearchOut",
    "SessionCloseIn",
    "SessionIn",
    "SessionOut",
    "SessionOutStatus",
    "StoredMessageOut",
    "TurnCompleteIn",
    "TurnCompleteOut",
    "TurnMessageIn",
    "TurnOut",
    "TurnOutStatus",
    "UpsertOut",
    "UpsertOutAction",
    "WebhookCreatedOut",
    "WebhookEvent",
    "WebhookIn",
    "WebhookOut",
    "WebhookSecretOut",
    "WebhooksOut",
    "WindowMessageOut",
)
