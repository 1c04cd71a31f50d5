"""Write Gate: schema-checked, provenance-stamped writes to a shared knowledge graph."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("write-gate")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

__all__ = ["__version__"]
