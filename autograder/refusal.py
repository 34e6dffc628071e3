"""Why an entry of the public API could not do its work at all (a missing folder, a file that is no notebook,
shards that disagree, a bundle without its sources): the one exception the stages' entries raise for it, and the
command line exits with status 2 and its reason. Light on purpose: the command line imports it before it knows
whether anything will be graded."""

__all__ = ["Refused"]


class Refused(Exception):
    """The work could not start, or stopped before writing anything that counts; the message says why."""
