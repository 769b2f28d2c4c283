"""Rule `funnel`: documents and words after each step, and why documents were lost
(corpusbuilder.funnel) → results/stats/funnel.tsv and skipped.tsv. Inputs are lists, one per shard."""

import logging

import pandas as pd

from corpusbuilder.funnel import FunnelCounts, funnel_counts, funnel_tables
from corpusbuilder.io import atomic_path
from corpusbuilder.logs import setup_logging

setup_logging(snakemake.log[0])
total = FunnelCounts()
for docs, blocks, language, exact in zip(
    snakemake.input.docs, snakemake.input.blocks, snakemake.input.language, snakemake.input.exact, strict=True
):
    total += funnel_counts(
        pd.read_parquet(docs, columns=["doc_id", "outcome", "reason", "n_good_blocks", "n_good_words"]),
        pd.read_parquet(blocks, columns=["doc_id", "n_words"]),
        pd.read_parquet(language, columns=["kept", "reason", "n_words"]),
        pd.read_parquet(exact, columns=["kept", "n_words"]),
    )
funnel, skipped = funnel_tables(total)
for table, path in ((funnel, snakemake.output.funnel), (skipped, snakemake.output.skipped)):
    with atomic_path(path) as tmp:
        table.to_csv(tmp, sep="\t", index=False)
logging.getLogger("corpusbuilder.funnel").info("funnel:\n%s", funnel.to_string(index=False))
