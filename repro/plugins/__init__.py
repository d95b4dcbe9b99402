"""GRPO-family plug-in points (advantage, ratio/loss, batch) and the catalog of their functions.

``catalog`` (no torch): ``Plugin``, ``PluginCatalog``, ``BUILTIN_PLUGINS``, ``plugin_catalog()`` (built-ins plus the
installed ``radar.repro.plugins`` entry points). ``points``: the signatures (torch); ``advantage``, ``loss``,
``batch``: the built-in functions.
"""

from radar.repro.plugins.catalog import (
    BUILTIN_CATALOG,
    BUILTIN_PLUGINS,
    ENTRY_POINT_GROUP,
    POINTS,
    Plugin,
    PluginCatalog,
    build_catalog,
    plugin_catalog,
)

__all__ = [
    "BUILTIN_CATALOG",
    "BUILTIN_PLUGINS",
    "ENTRY_POINT_GROUP",
    "POINTS",
    "Plugin",
    "PluginCatalog",
    "build_catalog",
    "plugin_catalog",
]
