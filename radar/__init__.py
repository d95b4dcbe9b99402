"""Research Radar's one installed import name.

The repository keeps the top-level folders the user asked for (``crawler/ index/ analysis/
reports/ app/ repro/`` plus ``store/``); ``radar/`` holds a symbolic link to each, so the code
imports ``radar.store``, ``radar.index`` ... and the wheel installs a single ``radar`` package
that cannot clash with another distribution's ``app`` or ``index``.
"""
