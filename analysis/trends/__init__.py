"""Trends: what is rising and falling, new methods, and topics, robust to changes in what is crawled.

Flow: terms.py (candidate terms of a document) -> cache.py (document x term table, cached and
updated incrementally) -> counts.py (documents per stratum and period) -> stats.py (stratified
test, mix-free shares, bursts) -> emerging.py (emerging/declining terms), methods.py (new method
names), series.py (tag series and tag trends), topics.py (clusters of recent embeddings with
stable ids) -> compute.py (``compute_trends``) -> result.py (``TrendsResult``, the JSON contract of
``radar trends``). Import from the modules; this package imports nothing heavy.
"""
