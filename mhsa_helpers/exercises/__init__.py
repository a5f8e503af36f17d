"""Exercise checkers, one module per lesson: ``mhsa_helpers.exercises.check_...(answer)``.

Each checker returns a ``CheckResult``: it displays as ``[PASS] ...`` or ``[NOT YET] ... hint: ...``
and is truthy only for a correct answer. The notebooks ship the learner's cell with
``# YOUR CODE HERE``; ``notebooks/solutions/`` holds worked answers that pass.
"""

from ._common import CheckResult

# Each lesson's module adds its checkers below (one import line per lesson module).

__all__ = ["CheckResult"]
