"""Tagging, trends and topics (filled by the tagging and trends issues)."""
