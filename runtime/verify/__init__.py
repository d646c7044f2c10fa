"""runtime.verify (being built)."""
