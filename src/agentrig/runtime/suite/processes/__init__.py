"""The processes of a run: the `-j N` worker pool and its forkserver, the workers, the run's one limiter served to
them, and the signals and exits that must not end a run without its reports."""
