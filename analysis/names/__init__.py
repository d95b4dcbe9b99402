"""Named things of the corpus with a kind: methods, models, benchmarks, systems, hardware, metrics, orgs.

Flow: extract.py (candidate names of one document and the evidence around each mention) -> aliases.py
(which spellings are one name) -> evidence.py (two passes over the corpus: evidence per name) -> kinds.py
(rules and a classifier fitted on labeled names) -> find.py (``find_names``, the ``Name`` values that
``radar methods`` stores and prints and that trends/reports read).
"""

from radar.analysis.names.aliases import surface_key
from radar.analysis.names.errors import NamesError
from radar.analysis.names.find import Name, find_names, kind_of, load_labels, name_index
from radar.analysis.names.kinds import KINDS

__all__ = ["KINDS", "Name", "NamesError", "find_names", "kind_of", "load_labels", "name_index", "surface_key"]
