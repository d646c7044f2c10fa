"""runtime.lint (being built)."""
