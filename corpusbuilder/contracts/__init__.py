"""The contracts between stages: the files one stage writes and another reads, each with its
one owner — where it lives, its schema, its reader and writer (`tables` for the Parquet tables,
`tokenfile` for the token file, `ngramfiles` for the n-gram runs and G₂₊), the words of its
verdicts (`verdicts`), and the stamp of who wrote it (`stamps`). Stages import this package and
never each other's files."""
