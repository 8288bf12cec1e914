"""Errors raised for bad user input.

Every message names the file (and line) or the config key, and says what was expected, so a user can fix the
input without reading a traceback.
"""


class InputError(ValueError):
    """Bad user input: a malformed file line, an unknown id, a config value out of range."""

    def __init__(self, message, path=None, line=None):
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f":{line}"
            where += ": "
        super().__init__(where + message)
        self.path = path
        self.line = line


class MissingDataError(RuntimeError):
    """Data that must be downloaded is missing and cannot be fetched (no network, no mirror)."""
