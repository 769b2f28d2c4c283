"""Boilerplate-quality evaluation (thesis §2.9) and the training of the `best` preset on the same
gold sets.

``gold`` reads the shared gold sets in their native formats, ``metrics`` scores an output text
against a gold page, ``baselines`` holds the BTE (§2.6.1) and boilerpipe DefaultExtractor
(Algorithm 2.1) reimplementations, ``extractors`` names every extractor the evaluation runs,
``scores`` runs them over the datasets and writes the tables, ``site`` scores site-level
boilerplate, and ``training`` fits the learned block classifier and scores it held out.
The corpus measurements and the HTML report are `corpusbuilder.report`.
"""
