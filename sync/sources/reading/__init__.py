"""Reading within bounds, shared by every reader: text from files and URLs (size and deadline
limits), folders walked with symlinks kept inside, YAML documents with aliases bounded, values shown
in problems cut short."""
