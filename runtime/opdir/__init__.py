"""The operator-directory contract (being built)."""
