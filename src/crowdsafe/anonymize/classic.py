"""Transitional alias, to delete when ``anonymize/publish.py`` imports
:func:`crowdsafe.anonymize.recoding.with_flat_hierarchies` directly.

The classic (uncertified) algorithms moved to :mod:`crowdsafe.classic`; this module imports
nothing from there, so the certified pipeline does not load them.
"""

from crowdsafe.anonymize.recoding import with_flat_hierarchies as _with_flat_hierarchies

__all__ = ["_with_flat_hierarchies"]
