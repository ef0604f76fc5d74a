"""Pictures: DOT and PNG."""
