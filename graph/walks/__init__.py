"""Walks over the snapshot: the layered walk, the compiled index, blast radius, suspects, paths, networkx."""
