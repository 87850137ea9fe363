"""`guarded`: the errors a person can cause, as one line and exit code 2.

Kept free of cyclopts: `capy.cli.quick` runs the warm `search` and `stats` through it without
the cyclopts app.
"""

from __future__ import annotations

from collections.abc import Callable


def guarded(action: Callable[[], int]) -> int:
    """Turn the errors a person can cause into one line on stderr and exit code 2."""
    from capy.cli.output import error_line
    from capy.config import ConfigError
    from capy.store import StoreError

    try:
        return action()
    except StoreError as error:
        error_line(error.message)
    except ConfigError as error:
        for line in error.lines:
            error_line(line)
    except Exception as error:
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
