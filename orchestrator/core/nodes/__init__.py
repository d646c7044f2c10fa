"""Graph nodes: one module per node, each ``(state, runtime) -> partial state update``."""
