from enum import Enum


class NarrativeInMode(str, Enum):
    FALLBACK = "fallback"
    SEED = "seed"

    def __str__(self) -> str:
        return str(self.value)
