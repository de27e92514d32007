"""Where the project's non-Python parts live (govkit is installed editable from the repo)."""

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
TEMPLATES_DIR = PROJECT_ROOT / "templates"
SCHEMAS_DIR = PROJECT_ROOT / "schemas"
DATA_DIR = Path(__file__).resolve().parent / "data"
