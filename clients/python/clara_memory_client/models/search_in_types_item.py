from enum import Enum


class SearchInTypesItem(str, Enum):
    EVENT = "event"
    FEELING = "feeling"
    LIFE_STORY = "life_story"
    OTHER = "other"
    PEOPLE = "people"
    PREFERENCE = "preference"
    PROFILE = "profile"
    ROUTINE = "routine"

    def __str__(self) -> str:
        return str(self.value)
