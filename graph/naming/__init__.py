"""Names: entity refs, the alias index, and suggestions for a name that does not resolve."""
