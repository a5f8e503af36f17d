"""Use an installed mhsa_helpers the way a learner outside the repository would.

Run from any folder with the Python of an environment where the package is installed (``make
install-test`` does this with the built wheel). It fails (exit 1, with the reason in one line) if
the package is imported from a source checkout instead of the install, if the course data is
missing, if ``import mhsa_helpers`` drags in the UI stack, or if a checker or an explorer does not
work; a package that cannot be imported at all is one line and exit 2.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
UI_STACK = ("matplotlib", "seaborn", "pandas", "ipywidgets")


def main() -> None:
    import mhsa_helpers as mh

    assert mh.__file__, f"mhsa_helpers is no installed package (no __init__.py in {mh.__path__})"
    location = Path(mh.__file__).resolve()
    checkout = location.parent.parent / "pyproject.toml"
    assert not checkout.exists(), f"imported from a checkout, not an install: {location}"
    loaded = [name for name in UI_STACK if name in sys.modules]
    assert not loaded, f"import mhsa_helpers loaded the UI stack: {loaded}"
    assert mh.__version__[0].isdigit(), f"__version__ = {mh.__version__!r}"

    journey = mh.load_journey()
    assert journey.words == ["Your", "journey", "starts", "with", "one", "step"], journey.words
    assert len(mh.load_glossary()) > 10
    assert tuple(mh.reference("simplified_context_2").shape) == (3,)

    import mhsa_helpers.exercises as ex

    result = ex.check_context_vector_new_token(None)
    assert not result and "[TO DO]" in str(result), result  # no answer yet
    result = ex.check_context_vector_new_token(journey.inputs[0])
    assert not result and "[NOT YET]" in str(result), result  # a wrong answer
    explorer = mh.attention_explorer()
    assert explorer.result.ok, explorer.result.message
    print(f"mhsa_helpers {mh.__version__} works from {location.parent} (cwd {Path.cwd()})")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import _toolkit  # tools/_toolkit.py: a missing package is one line and exit 2

    try:
        _toolkit.run(main, "check_install")
    except AssertionError as failed:  # a check that found a problem: its reason, exit 1
        print(f"check_install: {' '.join(str(failed).split())}", file=sys.stderr)
        sys.exit(1)
