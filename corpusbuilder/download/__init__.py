"""Download stage: turn the configured inputs into local WARC shards under data/warc/.

Inputs are URLs (http, https, s3), local paths and file:// URLs, or a Common-Crawl-style
``warc.paths(.gz)`` listing joined to a base URL (inputs). Each input gets a sanitised, unique WARC
name; consecutive inputs, ``input.warcs_per_shard`` at a time, make one shard, named after its
first (sources). HTTP (http_download) and S3 (s3) downloads go to ``{dest}.part``, resume with byte
ranges, retry with exponential back-off and are moved into place only when complete; local files
are symlinked (or copied), never downloaded (fetch). Every shard gets a JSON sidecar with its
source, size and sha256. A downloaded WARC must begin with a record and end with a whole one
(transfer.incomplete_warc): one cut off mid-record is a failed download, even when it is as long
as the server said.
"""
