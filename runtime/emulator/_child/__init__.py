"""Holds the sitecustomize that child processes of `python -m runtime.emulator` load (not imported)."""
