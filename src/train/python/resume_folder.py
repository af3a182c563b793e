"""Where a run's resume states live, and which is the latest: file names only, no torch, so that the launcher can
refuse to train over an unfinished run before it imports anything heavy. resume_state.py saves and loads them."""

from __future__ import annotations

import os
import shutil
from typing import Optional, Tuple

RESUME_FOLDER = "resume"
PROGRESS_FILE = "progress.json"


def latest(out: str) -> Optional[Tuple[str, int]]:
    """The newest complete state in `out`, and its step."""
    folder = os.path.join(out, RESUME_FOLDER)
    if not os.path.isdir(folder):
        return None
    states = sorted(name for name in os.listdir(folder)
                    if name.startswith("step-") and not name.endswith(".partial")
                    and os.path.isfile(os.path.join(folder, name, PROGRESS_FILE)))
    if not states:
        return None
    path = os.path.join(folder, states[-1])
    return path, int(states[-1][len("step-"):])


def remove(out: str) -> None:
    """A finished run needs no state to resume from (for the paper's model it is gigabytes)."""
    shutil.rmtree(os.path.join(out, RESUME_FOLDER), ignore_errors=True)
