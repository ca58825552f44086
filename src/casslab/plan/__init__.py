"""Energy- and cost-aware capacity planner (seed 001's adaptation model on HiGHS).

spec.py validates planner specs, model.py holds the piecewise-linear throughput models
(given or fitted from a results database), problem.py the shared problem and plan types,
milp.py the MILP, heuristic.py best-fit decreasing, report.py the entry point and output.
"""
