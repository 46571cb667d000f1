"""``python -m vlbench.lmms_eval_tasks``: see :mod:`vlbench.lmms_eval_tasks`."""

from . import main

raise SystemExit(main())
