"""Names kept where older code imports them (``tests/test_checkers_adversarial.py``); the
package itself imports from ``_result``, ``_parse`` and ``_kinds``."""

from ._parse import number, whole_number
from ._result import PredictionNoted, UntranslatedMessage

__all__ = ["PredictionNoted", "UntranslatedMessage", "number", "whole_number"]
