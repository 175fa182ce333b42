"""Planted broken candidate: imports a module that does not exist."""
import aka_no_such_module_xyz  # noqa: F401
