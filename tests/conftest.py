"""Shared pytest set-up: fixture modules live beside this file, one job each."""

import sys
from pathlib import Path

# tests/ helpers (synth.py, tf_profiles.py) are imported as plain modules.
sys.path.insert(0, str(Path(__file__).parent))

pytest_plugins = ["fixtures_tf", "fixtures_torch", "fixtures_server"]
