"""Say, before anything is created, whether this Python can run the course.

    python3 tools/check_python.py        # exit 0: fine; exit 1: a message says what to do

`make` runs it with the chosen interpreter (``PYTHON``) before it creates ``.venv``. It checks
the version against ``requires-python`` in pyproject.toml and that the ``venv`` and ``ensurepip``
modules exist (Debian and Ubuntu ship them separately, in ``python3.X-venv``). The message names
the Python that was found, the one that is needed, and the one command that fixes it.

Written to run on any Python, 2.7 included: no f-strings, no modern syntax, standard library only.
"""

# ruff: noqa: UP031  (%-formatting on purpose: this file must run on old interpreters)

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fail(message):
    """One line on stderr and exit status 2, as every tool in tools/ fails (never a traceback)."""
    sys.stderr.write("check_python: %s\n" % message)
    sys.exit(2)


def lowest_supported():
    """The (major, minor) of ``requires-python = ">=X.Y"`` in pyproject.toml."""
    path = os.path.join(ROOT, "pyproject.toml")
    try:
        with open(path) as handle:
            text = handle.read()
    except (IOError, OSError, UnicodeDecodeError) as error:  # noqa: UP024  (IOError: Python 2)
        fail("cannot read %s (%s)" % (path, getattr(error, "strerror", None) or error))
    match = re.search(r'requires-python\s*=\s*">=\s*(\d+)\.(\d+)', text)
    if not match:
        fail('no requires-python = ">=X.Y" in %s' % path)
    return int(match.group(1)), int(match.group(2))


def newer_pythons_on_path(lowest, path=None):
    """Names of interpreters on PATH such as python3.12 that are new enough, newest first."""
    found = set()
    for folder in (path if path is not None else os.environ.get("PATH", "")).split(os.pathsep):
        if not folder or not os.path.isdir(folder) or "shims" in folder.split(os.sep):
            continue
        for name in os.listdir(folder):
            match = re.match(r"^python(\d+)\.(\d+)$", name)
            full = os.path.join(folder, name)
            if match and os.access(full, os.X_OK):
                version = (int(match.group(1)), int(match.group(2)))
                if version >= lowest:
                    found.add((version, name))
    return [name for _, name in sorted(found, reverse=True)]


def module_missing(name):
    try:
        __import__(name)
    except ImportError:
        return True
    return False


def problem(version, lowest, missing, executable, debian, newer):
    """The message for this interpreter, or None when it can run the course.

    version: (major, minor, micro); lowest: (major, minor); missing: names of missing modules
    among venv and ensurepip; debian: whether apt-get is the system's installer; newer: names of
    newer interpreters on PATH.
    """
    found = "Python %d.%d.%d (%s)" % (version[0], version[1], version[2], executable)
    needed = "Python %d.%d or newer" % lowest
    if tuple(version[:2]) < tuple(lowest):
        if newer:
            fix = "make lab PYTHON=%s   (the same for make test)" % newer[0]
        else:
            fix = (
                "install Python %d.%d or newer (python.org, or `pyenv install 3.12`), "
                "then run: make lab PYTHON=python3.12" % lowest
            )
        return "The course needs %s; this is %s.\nFix: %s" % (needed, found, fix)
    if missing:
        package = "python%d.%d-venv" % (version[0], version[1])
        if debian:
            fix = "sudo apt-get install %s" % package
        else:
            fix = (
                "reinstall Python %d.%d with its standard library (the %s module is part of it)"
                % (
                    version[0],
                    version[1],
                    " and ".join(missing),
                )
            )
        return (
            "%s cannot create the course's virtual environment: the module%s %s %s missing.\n"
            "Fix: %s   (then run make again)"
            % (
                found,
                "s" if len(missing) > 1 else "",
                " and ".join(missing),
                "are" if len(missing) > 1 else "is",
                fix,
            )
        )
    return None


def main():
    lowest = lowest_supported()
    missing = [name for name in ("venv", "ensurepip") if module_missing(name)]
    debian = os.path.exists("/etc/debian_version")
    message = problem(
        tuple(sys.version_info[:3]),
        lowest,
        missing,
        sys.executable,
        debian,
        newer_pythons_on_path(lowest),
    )
    if message:
        sys.stderr.write("\n" + message + "\n\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
