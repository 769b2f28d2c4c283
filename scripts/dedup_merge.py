"""Rule `dedup_merge` (dedup.mode partitioned): every shard's counts → the stats file the report
reads (`stats`). The state's parts are the range jobs' (`dedup_state`)."""

import json
from dataclasses import asdict

from corpusbuilder.common.io import atomic_path
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.contracts.ngramfiles import duplicate_ngram_count
from corpusbuilder.dedup.corpus import DedupStats
from corpusbuilder.dedup.params import DedupParams
from corpusbuilder.dedup.partitioned import sum_stats

log = setup_logging(snakemake.log[0])
params = DedupParams.from_config(snakemake.params.cfg)
stats = sum_stats([DedupStats(**json.loads(open(path).read())) for path in snakemake.input.stats])
stats.duplicate_ngrams = duplicate_ngram_count(snakemake.input.duplicates)
with atomic_path(snakemake.output.stats) as tmp:
    tmp.write_text(json.dumps({"params": asdict(params), **asdict(stats)}, indent=1) + "\n")
log.info("dedup: %d documents, blocks %s", stats.documents, stats.blocks)
