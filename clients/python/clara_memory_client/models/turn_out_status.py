from enum import Enum


class TurnOutStatus(str, Enum):
    IDLE = "idle"
    QUEUED = "queued"
    TURN = "turn"

    def __str__(self) -> str:
        return str(self.value)
