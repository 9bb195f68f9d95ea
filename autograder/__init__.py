"""The course kit's grader: configuration, sandboxed execution, test running and results."""
