"""Boilerplate removal (thesis chapter 2): from a WARC record to a page's kept blocks.

``warc`` reads the records, ``decoding`` turns a body into text, ``justext`` segments and
classifies blocks as Algorithms 2.1-2.3 do, ``classifier`` is the learned `best` preset (with its
compiled walk, ``_fastpath``), ``adapt`` self-training
on a crawl, ``site_boilerplate`` the blocks a site repeats, ``frequent_lines`` the preambles of
plain-text collections, and ``extract`` the shard loop that ties them together.
"""
