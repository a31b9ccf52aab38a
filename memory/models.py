"""Every model of the memory app, from the subpackage that owns it.

Django finds an app's models here; code inside `memory/` imports them from their own subpackage
(`memory.conversations.models`, ...), which keeps the layers' arrows pointing one way.
"""

from memory.companion.models import (  # noqa: F401
    CheckIn,
    CheckInSettings,
    Narrative,
    PendingMessage,
    StreamSummary,
    TurnLock,
)
from memory.conversations.models import (  # noqa: F401
    DEFAULT_ORGANISATION,
    DEFAULT_PERSONA,
    AccessAction,
    AccessChannel,
    AccessEvent,
    AccessOutcome,
    ApiKey,
    ChatMessage,
    DetectedEmotion,
    Emotion,
    Home,
    MemoryPolicy,
    NarrativeUsage,
    Organisation,
    OrganisationMembership,
    Person,
    Persona,
    QuestionType,
    RepetitionRecord,
    Scope,
    Session,
    Trajectory,
    Unit,
)
from memory.facts.models import (  # noqa: F401
    Commitment,
    Memory,
    MemoryScope,
    MemorySnapshot,
    MemoryType,
    PersonNotes,
)
from memory.insights.models import (  # noqa: F401
    Alert,
    PersonTrend,
    RollingSummary,
    SummarySpine,
)
from memory.webhooks.models import (  # noqa: F401
    Webhook,
    WebhookDelivery,
    WebhookEvent,
)
