"""Grading a class (or a sweep): many submissions x models, one isolated `profconv run` job each.

Stages, one module each, imports pointing down the list:
- `submissions`: what is graded (directories, kernel files, a CSV/TOML listing) and its content hash;
- `jobs`: the job model, the pure command builder, and `run_job` (what a worker runs: one
  subprocess with a time limit, its outcome written atomically as job.json);
- `manifest`: the grade directory's manifest (engine, host, GPU, driver, profconv version per job)
  and resuming (skip jobs finished on the same submission hash);
- `executors`: `local` (a process per job, one job per GPU), `slurm` (submitit job arrays) and
  `ray` (`num_gpus=1` tasks) behind one interface;
- `leaderboard`: run records -> one DataFrame (correctness, Op Time per layer, ratios to cuDNN and
  to the class median).
"""
