"""Crawlers: arXiv API and RSS listing, blog/news feeds, and snapshot import."""
