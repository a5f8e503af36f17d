"""What every tool in tools/ shares: one shape for failing, one way of writing a file.

* ``run(main, name)``: calls ``main()`` and exits with its status; an *expected* failure -- a
  bad path, a file that cannot be read or parsed, a missing dependency, a command that failed,
  or a ``ToolError`` the tool raised itself -- becomes one line on stderr, ``NAME: message``,
  and exit status 2, never a traceback. (A traceback still means a bug in the tool.)
* ``write_text`` / ``write_bytes``: the file is written to a temporary file beside the target
  and renamed into place, so an interrupted or failed run never leaves a half-written file.
* ``require(module, why)``: import a dependency that a plain venv may lack, or fail naming the
  package to install.

(tools/check_python.py runs on any Python, 2.7 included, and keeps its own copy of the rule.)
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import NoReturn

EXIT_FAILURE = 2


class ToolError(Exception):
    """An expected failure a tool reports in one line (a bad path, a broken input file)."""


EXPECTED = (ToolError, OSError, ValueError, ImportError, subprocess.CalledProcessError)


def describe(error: BaseException) -> str:
    """One line saying what went wrong, the file or command named."""
    if isinstance(error, subprocess.CalledProcessError):
        command = " ".join(str(part) for part in error.cmd)
        detail = error.stderr or error.output or ""
        if isinstance(detail, bytes):
            detail = detail.decode(errors="replace")
        lines = [line for line in str(detail).splitlines() if line.strip()]
        text = f"`{command}` failed with exit status {error.returncode}"
        if lines:
            text += f": {lines[0].strip()}"
    elif isinstance(error, OSError) and error.filename is not None:
        text = f"{error.filename}: {error.strerror or error}"
    elif isinstance(error, ImportError):
        text = str(error)
    else:
        text = str(error) or type(error).__name__
    return " ".join(text.split())  # one line


def run(main: Callable[[], int | None], name: str) -> NoReturn:
    """``sys.exit(main())``, with every expected failure as one line on stderr and status 2."""
    try:
        status = main()
    except EXPECTED as error:
        print(f"{name}: {describe(error)}", file=sys.stderr)
        sys.exit(EXIT_FAILURE)
    except KeyboardInterrupt:
        print(f"{name}: interrupted; no file was half-written", file=sys.stderr)
        sys.exit(130)
    sys.exit(status or 0)


def write_bytes(path: Path, data: bytes, mode: int = 0o644) -> Path:
    """Write ``data`` to ``path`` through a temporary file beside it, renamed into place."""
    path = Path(path)
    if path.is_dir():
        raise ToolError(f"{path} is a folder; give a file name")
    if not path.parent.is_dir():
        raise ToolError(f"no folder {path.parent} to write {path.name} in")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path


def write_text(path: Path, text: str, encoding: str = "utf-8") -> Path:
    """``write_bytes`` for text (encoded, newlines kept as they are)."""
    return write_bytes(path, text.encode(encoding))


def require(module: str, package: str, why: str) -> ModuleType:
    """Import ``module`` or raise ``ToolError`` naming the pip ``package`` and why it is needed."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ToolError(
            f"needs {package} ({why}): pip install -e '.[dev]' or pip install {package}"
        ) from None
