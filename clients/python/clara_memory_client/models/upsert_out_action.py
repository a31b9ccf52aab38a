from enum import Enum


class UpsertOutAction(str, Enum):
    CREATED = "created"
    REINFORCED = "reinforced"
    SUPERSEDED = "superseded"

    def __str__(self) -> str:
        return str(self.value)
