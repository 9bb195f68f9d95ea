"""attack: make the trusted grading process parse and transform megabytes of code: the test grades a
notebook of the course's correct code with one more code cell: this file's text with 1.1 MiB of
comment lines at the marker below (over course.yml's limits.source_kb, 1024 KiB).
expect: the submission is refused before any of its code is parsed, with a message saying why and
what the limit is: every component scores 0; the next submission is graded normally.
"""
x = 1
# PADDING
