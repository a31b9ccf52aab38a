"""The anchors of a conversation: the people, pets, places and objects the person mentions.

The prompt offers them for warm callbacks; the caregivers' summaries list them.
"""

import re
from collections.abc import Sequence

MAX_ANCHORS = 8

# Anchors: the people, pets, places and objects of this conversation.
_ANCHOR_WORDS = frozenset(
    """
    husband wife mum mom mother dad father son daughter brother sister grandson granddaughter
    grandchildren baby nurse friend neighbour neighbor cat kitten dog puppy bird birds budgie
    horse garden kitchen church seaside beach sea park farm school shop market station home
    house village river lake tea cake bread biscuits photo photograph radio piano music song
    flowers roses book letter car bicycle dance ring
    """.split()
)
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,})\b")
_NOT_NAMES = frozenset(
    """
    I Im Clara The This That What Where When Who Why How Yes No Oh Well Okay Hello Please Thank
    Thanks Sunday Monday Tuesday Wednesday Thursday Friday Saturday January February March April
    May June July August September October November December God Dear
    """.split()
)


def find_anchors(texts: Sequence[str], *, limit: int = MAX_ANCHORS) -> list[str]:
    """People, pets, places and objects mentioned in these texts, most recent mention first."""
    found: dict[str, None] = {}
    for text in reversed(texts):
        for sentence in re.split(r"(?<=[.!?])\s+", text):
            for match in _NAME.finditer(sentence):
                name = match.group(1)
                if name not in _NOT_NAMES:
                    found.setdefault(name, None)
            for word in re.findall(r"[a-z]+", sentence.lower()):
                if word in _ANCHOR_WORDS:
                    found.setdefault(word, None)
        if len(found) >= limit:
            break
    return list(found)[:limit]
