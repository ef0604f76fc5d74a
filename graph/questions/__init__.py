"""Questions: what a free-text question asks, and the answers the graph gives to each ask."""
