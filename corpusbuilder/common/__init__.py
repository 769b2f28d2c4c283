"""What every stage shares: atomic file output, logging, provenance, the
packaged data and the stop lists."""
