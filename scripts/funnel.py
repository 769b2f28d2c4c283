"""Rule `funnel`: the finished corpus's account → results/stats/funnel.tsv and skipped.tsv
(documents and words after each step, and why documents were lost: corpusbuilder.funnel) and
results/stats/provenance.json (what decided the corpus: corpusbuilder.common.provenance).
Inputs: every shard's stage tables, lists in shard order (params `shards`); the `best` preset's
`model` (none with a jusText preset); `files`, the stage files whose writers the record names,
and the corpus, only waited for. Params: `config`, the effective config; `files`,
{rule: {shard or hash range: file}}."""

import logging

from corpusbuilder.common.io import atomic_path
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.common.provenance import provenance, write_provenance
from corpusbuilder.contracts.stamps import file_writer
from corpusbuilder.contracts.tables import ShardTables
from corpusbuilder.funnel import FunnelCounts, count_shard, funnel_tables

setup_logging(snakemake.log[0])
log = logging.getLogger("corpusbuilder.funnel")
inputs = snakemake.input
total = sum(
    map(count_shard, ShardTables.every_shard(inputs, snakemake.params.shards)), FunnelCounts()
)
funnel, skipped = funnel_tables(total)
for table, path in ((funnel, snakemake.output.funnel), (skipped, snakemake.output.skipped)):
    with atomic_path(path) as tmp:
        table.to_csv(tmp, sep="\t", index=False)
log.info("funnel:\n%s", funnel.to_string(index=False))

# an empty input list (a jusText preset) may leave no `model` entry at all
model = next(iter(dict(inputs.items()).get("model") or []), None)
writers = {
    stage: {shard: file_writer(path) for shard, path in files.items()}
    for stage, files in snakemake.params.files.items()
}
record = provenance(dict(snakemake.params.config), model, writers)
write_provenance(record, snakemake.output.record)
log.info(
    "corpusbuilder %s, model %s", record["corpusbuilder"], (record["model"] or {}).get("sha256")
)
for rule, libraries in record["mixed_versions"].items():
    for name, versions in libraries.items():
        log.warning(
            "rule %s's files were written with %s %s: its shards (or hash ranges) come from runs "
            "apart (which: provenance.json; snakemake --cores N -R %s makes them one)",
            rule,
            name,
            ", ".join(versions),
            rule,
        )
