"""Where the generated clients are (clients/), and reading a README's example."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "clients"
PYTHON_CLIENT = CLIENTS / "python"
TYPESCRIPT_CLIENT = CLIENTS / "typescript"


def readme_block(readme: Path, heading: str, language: str) -> str:
    """The first `language` code block under `heading` in a README."""
    text = readme.read_text()
    section = text.split(f"\n{heading}\n", 1)[1]
    match = re.search(rf"```{language}\n(.*?)\n```", section, re.DOTALL)
    assert match, f"no {language} block under {heading!r} in {readme}"
    return match.group(1) + "\n"
