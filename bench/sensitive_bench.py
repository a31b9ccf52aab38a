"""Cost of the sensitive-data filter and the fact extractor per message.

Both run on every exchange (redaction on the write path, extraction when facts are harvested),
so their cost is what a turn pays. Prints the median of several rounds, in microseconds per
message, for the kinds of message a person sends and for the largest message the API accepts.

    .venv/bin/python bench/sensitive_bench.py [--rounds 7]
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memory.core.sensitive import redact  # noqa: E402
from memory.facts.extraction import extract_facts  # noqa: E402

# memory.conversations.schemas.MAX_MESSAGE_CHARS; not imported, as schemas needs Django's settings.
MAX_MESSAGE_CHARS = 8000

MESSAGES = {
    "plain talk": "Oh hello dear, I was just thinking about my daughter Sarah, she's coming on "
    "Saturday with the children.",
    "talk with numbers": "I was born in 1938 and I've got 3 grandchildren, the eldest is 24 now.",
    "card and PIN": "The man said he was from the bank and I read him 4111 1111 1111 1111 and "
    "my PIN is 4321.",
    "short question": "Where am I?",
    f"{MAX_MESSAGE_CHARS} chars, digits": ("I rang 0113 496 0000 in 1962 at 10:30. " * 400)[
        :MAX_MESSAGE_CHARS
    ],
    f"{MAX_MESSAGE_CHARS} chars, words": ("My daughter is lovely and I love tea. " * 400)[
        :MAX_MESSAGE_CHARS
    ],
}


def per_call_us(fn, text: str, rounds: int) -> float:
    """Median over `rounds` of the mean time per call, calls sized to ~0.2 s a round."""
    start = time.perf_counter()
    fn(text)
    once = max(time.perf_counter() - start, 1e-6)
    calls = max(1, min(5000, int(0.2 / once)))
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn(text)
        samples.append((time.perf_counter() - start) / calls * 1e6)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    print(f"{'message':28} {'redact µs':>12} {'extract µs':>12}")
    for name, text in MESSAGES.items():
        redact_us = per_call_us(redact, text, args.rounds)
        extract_us = per_call_us(extract_facts, text, args.rounds)
        print(f"{name:28} {redact_us:12.1f} {extract_us:12.1f}")


if __name__ == "__main__":
    main()
