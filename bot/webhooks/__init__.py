"""Deploy events pushed in over HTTP: POST /webhooks/github and POST /webhooks/deploys."""
