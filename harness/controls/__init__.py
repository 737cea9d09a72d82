"""Controls: what the harness does for a model at named points of a turn, one small object each.

Adding a control: a module here with a `Hooks` subclass (a name, its settings, the hooks it acts at), and
its class in `profiles.CONTROLS`. The loop calls the hook points in order and knows no control by name.
"""

from harness.controls.base import Hooks
from harness.controls.profiles import PROFILES, SMALL, TINY, build, choose, named
from harness.core.turn import Control, NotYet, RunContext, Turn

__all__ = ["PROFILES", "SMALL", "TINY", "Control", "Hooks", "NotYet", "RunContext", "Turn", "build", "choose", "named"]
