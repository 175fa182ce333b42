"""A TileLang candidate, for a runtime where TileLang is not installed."""
import tilelang  # noqa: F401
