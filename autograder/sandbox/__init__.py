"""The sandbox: the only place student code runs.

`bwrap` starts the fork server inside bubblewrap (torch-free, so it can start first), `forkserver`
is the grader's side of it (one fresh child per job, limits, clean-up), and `runtime/` is the code
that runs inside (fork server, child, loader, wire format); it imports nothing else of the kit.
Importing this package imports nothing: the student bundle ships `runtime/procedures.py` with it.
"""
