"""Cost-optimal capacity plans (``nodewright plan --strategy cost``) and oversized-node advice.

Boundary: builds on :mod:`nodewright.scheduling` (the same placement checks, the same document)
and adds the optimisation: the covering LP (:mod:`.lp`), packing (:mod:`.packing`), the guided
Solve (:mod:`.guided`) and the strategy (:mod:`.strategy`).
"""
