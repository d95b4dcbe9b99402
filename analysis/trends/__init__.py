"""Trends: what is rising and falling, new methods, and topics, robust to changes in what is crawled.

Flow: terms.py (candidate terms of a document) -> cache.py (document x term table, cached and
updated incrementally) -> counts.py (documents per stratum and period) -> stats.py (stratified
test, mix-free shares, bursts) -> emerging.py (emerging/declining terms), methods.py (new method
names), series.py (tag series and tag trends), topics.py (clusters of recent embeddings with
stable ids) -> compute.py (``compute_trends``, the JSON contract of ``radar trends``).
"""

from radar.analysis.trends.compute import compute_trends, trends_config
from radar.analysis.trends.config import WINDOWS, TrendsConfig
from radar.analysis.trends.errors import TrendsError

__all__ = ["WINDOWS", "TrendsConfig", "TrendsError", "compute_trends", "trends_config"]
