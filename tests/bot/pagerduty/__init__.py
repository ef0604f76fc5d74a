"""PagerDuty webhooks: signatures, payloads, the incident channel."""
