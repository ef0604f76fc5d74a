"""Deploys placed on entities, and deploy deltas joined to a built snapshot."""
