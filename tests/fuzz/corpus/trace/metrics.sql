UPDATE replay_metrics SET value = 1e308; UPDATE replay_runs SET device = -7;
