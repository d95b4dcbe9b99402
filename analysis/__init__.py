"""Analysis of the stored documents: tagging (analysis.tags) and trends, new methods and topics (analysis.trends)."""
