"""Where the shipped `schemas/` and `migrations/` folders are: inside the wheel, or the source tree."""

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # write_gate/


def bundled(name: str) -> Path:
    inside_wheel = _PACKAGE / "_bundled" / name
    if inside_wheel.is_dir():
        return inside_wheel
    return _PACKAGE.parent.parent / name  # editable install: the repository root
