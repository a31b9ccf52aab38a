from enum import Enum


class EmotionInTrajectory(str, Enum):
    DE_ESCALATING = "de-escalating"
    ESCALATING = "escalating"
    STABLE = "stable"

    def __str__(self) -> str:
        return str(self.value)
