"""The environment of the student's code, the same whatever isolates it (bubblewrap or process mode).

The fork server is started with it (bwrap.child_env), and each child sets it again before it loads a
submission (child.uniform_process): what a mode or an import added meanwhile is gone.
"""
from __future__ import annotations

ENVIRONMENT = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1",
               "MKL_NUM_THREADS": "1", "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8"}
