"""Files the program ships: example operators and sequences, icons and the style sheet."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent
EXAMPLES = ROOT / "examples"
