"""Grading: a submission's file (`submission`), the code each sandboxed child is handed
(`dependencies`), the proxies tests use (`remote`, `providers`), one submission's pytest session
(`session`), scores (`scoring`), what they become (`results`), and a class in parallel (`pool`)."""
