from enum import Enum


class MemoryOutSource(str, Enum):
    CAREGIVER = "caregiver"
    CONVERSATION_EXTRACTION = "conversation_extraction"
    CURATED_FOLD = "curated_fold"
    SEEDED_PROFILE = "seeded_profile"
    TOOL = "tool"

    def __str__(self) -> str:
        return str(self.value)
