"""The browser view's exceptions."""

from __future__ import annotations


class ViewError(ValueError):
    """What the view cannot show (a recording with no robot, a bad description, ...).

    The message names the file (and topic) it comes from.
    """
