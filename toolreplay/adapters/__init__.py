"""Adapters: record and replay a provider SDK's calls as effects, without touching its transport."""
