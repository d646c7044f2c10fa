"""runtime.emulator (being built)."""
