"""Near-duplicate documents by min-hash (``minhash``) and how two
paginated books relate (``books``)."""
