"""What a viewer may see, what is redacted for them, and the runbook passages answers quote."""
