"""Embedding index and hybrid search (filled by the embedding issue)."""
