"""Rule `provenance`: what decided the corpus (corpusbuilder.common.provenance) →
results/stats/provenance.json. Inputs: the `best` preset's `model` (none with a jusText preset),
`tables`, every shard's stage tables, whose writers it records, and the corpus files and funnel,
only waited for; params: `config`, the effective config, and `tables`, {rule: {shard: table}}."""

import logging

from corpusbuilder.common.io import table_writer
from corpusbuilder.common.logs import setup_logging
from corpusbuilder.common.provenance import provenance, write_provenance

setup_logging(snakemake.log[0])
log = logging.getLogger("corpusbuilder.provenance")
# an empty input list (a jusText preset) may leave no `model` entry at all
model = next(iter(dict(snakemake.input.items()).get("model") or []), None)
writers = {
    stage: {shard: table_writer(path) for shard, path in shards.items()}
    for stage, shards in snakemake.params.tables.items()
}
record = provenance(dict(snakemake.params.config), model, writers)
write_provenance(record, snakemake.output.record)
log.info(
    "corpusbuilder %s, model %s", record["corpusbuilder"], (record["model"] or {}).get("sha256")
)
for rule, libraries in record["mixed_versions"].items():
    for name, versions in libraries.items():
        log.warning(
            "rule %s's tables were written with %s %s: its shards come from runs apart (by "
            "shard in provenance.json; snakemake --cores N -R %s makes them one)",
            rule,
            name,
            ", ".join(versions),
            rule,
        )
