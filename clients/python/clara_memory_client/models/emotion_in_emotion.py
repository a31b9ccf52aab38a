from enum import Enum


class EmotionInEmotion(str, Enum):
    ANXIOUS = "anxious"
    CALM = "calm"
    CONFUSED = "confused"
    FEARFUL = "fearful"
    LONELY = "lonely"
    NEUTRAL = "neutral"
    SAD = "sad"

    def __str__(self) -> str:
        return str(self.value)
