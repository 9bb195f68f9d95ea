"""Instructor reference implementation of the attention course: one module per assignment.

These modules are the single source of truth for every solution: the instructor notebooks'
solution regions, the support modules shipped with later assignments and the grader's reference
outputs are all generated from (or checked against) them.
"""
