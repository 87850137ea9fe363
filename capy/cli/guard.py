"""`guarded`: the errors a person can cause, as one line and exit code 2.

Kept free of cyclopts: `capy.cli.quick` runs the warm `search` and `stats` through it without
the cyclopts app.
"""

from __future__ import annotations

import sys
from collections.abc import Callable


def guarded(action: Callable[[], int]) -> int:
    """Turn the errors a person can cause into one line on stderr and exit code 2."""
    from capy.cli.output import error_line
    from capy.store import StoreError

    try:
        return action()
    except StoreError as error:
        error_line(error.message)
    except Exception as error:
        if _is_config_error(error):
            for line in error.lines:  # type: ignore[attr-defined]
                error_line(line)
            return 2
        from capy.store.failures import explain_failure

        explained = explain_failure(error, None)  # a disk that filled up or broke mid-command
        if explained is not None:
            error_line(explained.message)
            return 2
        if "locked" not in str(error) and "busy" not in str(error):
            raise
        error_line(
            "the database stayed locked by another capy process for 30 seconds; "
            "try again, or stop the process holding it (an MCP server or a long hook)"
        )
    return 2


def _is_config_error(error: Exception) -> bool:
    """Whether `error` is a ConfigError, without importing its module (and pydantic with it)
    when nothing did: a command that never read the settings cannot have raised one."""
    errors = sys.modules.get("capy.config.errors")
    return errors is not None and isinstance(error, errors.ConfigError)
