"""``python -m crowdsafe`` runs the command line."""

from crowdsafe.cli import run

run()
