"""Access kinds beyond plain loads and stores: one module per kind (see docs/scenario-format.md)."""
