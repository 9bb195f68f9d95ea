"""attack: make reading the notebook take hours in the trusted grading process. The test grades a
notebook of the course's correct code with one more code cell: this file's text with 250,000 blank
lines at the marker below, and a line magic after them. The IPython-syntax check (a regex with
`^\s*` under re.M) and IPython's transformer were quadratic in such a cell: the class after it
was never graded (course grade, nbgrader autograde, Dask workers, course report).
expect: the cell is read in one linear pass (a few seconds of CPU at most, well within course.yml's
limits.read_seconds): full marks, a small results file, and the next submission graded normally.
"""
x = 1
# BLANK LINES
%time x
