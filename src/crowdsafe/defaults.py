"""Default values of public keywords, in a module that imports nothing.

A signature that names one (:mod:`crowdsafe.api`, :mod:`crowdsafe.budgets`) then does not import
the layer that reads it: ``crowdsafe anonymize`` never opens the ledger, and only ``crowdsafe
check`` needs the privacy models. The layers take their constants from here.
"""

from __future__ import annotations

#: The ledger spec that means ``$CROWDSAFE_LEDGER``, else the per-user ledger file
#: (:func:`crowdsafe.privacy.ledger.ledger_for`; ``crowdsafe.privacy.ledger.DEFAULT``).
DEFAULT_LEDGER = "default"
#: Re-identification risk above which a record counts as at risk: 1/5, records in classes smaller
#: than 5 (:mod:`crowdsafe.models.risk`; ``crowdsafe.models.DEFAULT_THRESHOLD``).
DEFAULT_THRESHOLD = 0.2
