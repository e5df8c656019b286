import sys
from pathlib import Path

# the table strategies are shared with tests/anonymize
sys.path.insert(0, str(Path(__file__).parent.parent / "anonymize"))
