from enum import Enum


class PersonaPolicyInMemoryPolicy(str, Enum):
    CONTINUOUS = "continuous"
    DEMENTIA_SAFE = "dementia_safe"

    def __str__(self) -> str:
        return str(self.value)
