"""How far to trust the graph: freshness verdicts, each source's read problems, the hygiene report."""
