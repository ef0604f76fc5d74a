"""Slack messages: Block Kit, attachments, alert threads."""
