"""Errors of grading as a whole (torch-free, so the command line can name them before importing torch)."""


class GradingRefused(Exception):
    """The batch was not graded (for example: no isolation, and --allow-unisolated not given)."""
