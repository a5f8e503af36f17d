"""Exercise checkers, one module per lesson: ``mhsa_helpers.exercises.check_...(answer)``.

Each checker returns a ``CheckResult``: it displays as ``[PASS] ...`` or ``[NOT YET] ... hint: ...``
and is truthy only for a correct answer. The notebooks ship the learner's cell with
``# YOUR CODE HERE``; ``notebooks/solutions/`` holds worked answers that pass.

What is exported comes from the lesson modules themselves: every ``check_...`` name in a lesson
module's ``__all__``, each wrapped by ``never_raises`` so that nothing a learner passes makes it
raise or hang. A new checker is exported by naming it in its lesson module's ``__all__``.
"""

from importlib import import_module as _import_module

from ._result import CheckResult as CheckResult
from ._result import never_raises as _never_raises
from .lesson01 import NEW_TOKEN_EMBEDDING as NEW_TOKEN_EMBEDDING

# The lesson modules, ``lesson01`` .. ``lesson13``, in the order of the course.
_LESSONS = tuple(_import_module(f".lesson{number:02d}", __name__) for number in range(1, 14))

_CHECKERS = {
    name: _never_raises(getattr(module, name))
    for module in _LESSONS
    for name in module.__all__
    if name.startswith("check_")
}
globals().update(_CHECKERS)

__all__ = sorted(["CheckResult", "NEW_TOKEN_EMBEDDING", *_CHECKERS])
