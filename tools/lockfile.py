"""Read constraints.txt, the universal lock: ``name==version`` with an optional environment marker.

One package may have several lines, each for the interpreters its marker selects (e.g.
``soupsieve==2.10 ; python_full_version < '3.11.5'``). ``pins(env)`` gives the one version per
package that applies to an interpreter, the way pip reads the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from packaging.markers import Marker
from packaging.utils import canonicalize_name

LOCK = Path(__file__).resolve().parent.parent / "constraints.txt"


@dataclass(frozen=True)
class Pin:
    name: str  # canonical: lower case, '-' for '_' and '.'
    version: str  # exact, local label (+cpu) dropped
    marker: Marker | None

    def applies(self, env: dict[str, str] | None = None) -> bool:
        return self.marker is None or self.marker.evaluate(env or {})


def entries(path: Path = LOCK) -> list[Pin]:
    pins = []
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        requirement, _, marker = line.partition(";")
        match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s]+)", requirement.strip())
        if not match:
            raise ValueError(
                f"{path.name} line {number} is not 'name==version [; marker]': {raw!r}"
            )
        pins.append(
            Pin(
                canonicalize_name(match.group(1)),
                match.group(2).split("+")[0],
                Marker(marker.strip()) if marker.strip() else None,
            )
        )
    return pins


def pins(env: dict[str, str] | None = None, path: Path = LOCK) -> dict[str, str]:
    """name -> the exact version that applies to the interpreter ``env`` describes (default: this
    one; keys as in packaging's marker environment, e.g. ``{"python_full_version": "3.11.2"}``)."""
    chosen: dict[str, str] = {}
    for pin in entries(path):
        if pin.applies(env):
            if pin.name in chosen and chosen[pin.name] != pin.version:
                raise ValueError(f"{path.name} pins {pin.name} twice for one interpreter")
            chosen[pin.name] = pin.version
    return chosen
