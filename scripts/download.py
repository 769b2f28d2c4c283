"""Rule `download`: params.source → output.warc, with its sidecar at output.meta (corpusbuilder.download).

The params retries, backoff, timeout, copy_local and s3 are optional; fetch's defaults apply otherwise.
"""

from corpusbuilder.download import fetch
from corpusbuilder.logs import setup_logging

setup_logging(snakemake.log[0])
options = ("retries", "backoff", "timeout", "copy_local", "s3")
fetch(
    snakemake.params.source,
    snakemake.output.warc,
    meta_path=snakemake.output.meta,
    expect_warc=True,
    **{name: snakemake.params[name] for name in options if name in snakemake.params.keys()},
)
