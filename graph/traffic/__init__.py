"""Where declared and observed calls disagree, and what is failing now."""
