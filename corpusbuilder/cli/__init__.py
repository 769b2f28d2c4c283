"""The `corpusbuilder` command (``main``) and the SLURM job-status helper of its cluster profile."""
