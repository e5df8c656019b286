"""``python -m crowdsafe`` runs the command line."""

from crowdsafe.console import run

run()
