"""The course's data files, installed as the package ``mhsa_helpers.course_data``.

This folder stays at the top of the repository, where learners and contributors look for it;
``pyproject.toml`` maps it into the package so that every install (editable, wheel) carries the
files and ``importlib.resources`` finds them. Read them with ``mhsa_helpers.data``.
"""
