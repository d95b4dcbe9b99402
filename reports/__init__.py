"""Weekly adoption reports (filled by the report issue)."""
