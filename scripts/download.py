"""Rule `download`: params.sources ({warc: source} of one shard) → output.warcs, a folder of the
WARCs and their sidecars (corpusbuilder.download.fetch.fetch_shard), through params.staging.

The params retries, backoff, timeout, copy_local and s3 are optional;
fetch's defaults apply otherwise.
"""

from corpusbuilder.common.logs import setup_logging
from corpusbuilder.download.fetch import fetch_shard

setup_logging(snakemake.log[0])
options = ("retries", "backoff", "timeout", "copy_local", "s3")
fetch_shard(
    snakemake.params.sources,
    snakemake.output.warcs,
    snakemake.params.staging,
    **{name: snakemake.params[name] for name in options if name in snakemake.params.keys()},
)
