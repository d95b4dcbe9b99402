"""Research Radar's one installed import name.

The repository keeps the top-level folders the user asked for (``crawler/ index/ analysis/
reports/ app/ repro/`` plus ``store/`` and ``data/``); pyproject's ``package-dir`` installs each
as ``radar.<folder>``, so the code imports ``radar.store``, ``radar.index`` ... and the wheel
installs a single ``radar`` package that cannot clash with another distribution's ``app`` or
``index``. The symbolic links here (``radar/store -> ../store`` ...) serve the checkout only
(the editable install, mypy, import-linter); no code resolves them.
"""
