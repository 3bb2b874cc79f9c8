"""The error types the Advisor raises on purpose: each message says what is wrong and where."""


class AdvisorError(Exception):
    """Base class: anything the CLI prints as a one-line error and the server answers with 4xx JSON."""


class ProfileReadError(AdvisorError):
    """A profile file is empty, truncated, corrupt or not an XSpace; the message names the file."""

    def __init__(self, source: str, problem: str):
        self.source = source
        self.problem = problem
        super().__init__(f"cannot read profile {source}: {problem}")

    def __reduce__(self):  # rebuilt from its two fields when it comes back from a worker process
        return (type(self), (self.source, self.problem))


class ProfileChangedError(ProfileReadError):
    """The file was rewritten or truncated while it was read: not a bad profile, try again later.

    Callers must not cache this answer: the next read (of the finished file) may well succeed.
    """


class ProfileTooLargeError(ProfileReadError):
    """The file (or what its gzip inflates to) is over the profile size cap: HTTP 413, not 422."""


class ProfileMissingError(ProfileReadError):
    """The file is not there (any more): HTTP 404, not 422."""


def error_line(exc: BaseException) -> str:
    """The one line a user or an agent reads for a failure on purpose: the CLI prints it on stderr,
    the MCP server answers it as a tool error."""
    return f"tb-advisor: error: {exc}"
