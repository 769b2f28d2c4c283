"""corpusbuilder: jusText boilerplate removal and onion de-duplication for web corpora.

The library implements the system of J. Pomikálek's thesis *Removing Boilerplate and
Duplicate Content from Web Corpora* (Masaryk University, 2011), one module per stage.
"""

__version__ = "0.1.0"
