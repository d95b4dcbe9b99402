"""Per-person radar: libraries, learned ranking, digests, saved searches and alerts."""
