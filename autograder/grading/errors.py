"""Errors of grading as a whole (torch-free, so the command line can name them before importing torch)."""


class GradingRefused(Exception):
    """The batch was not graded (for example: no isolation, and --allow-unisolated not given)."""


class GradingFailed(Exception):
    """The grader could not grade the batch itself (its grading workers could not start)."""
