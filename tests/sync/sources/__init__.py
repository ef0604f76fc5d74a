"""Source readers, one kind at a time."""
