"""Boilerplate-quality evaluation (thesis §2.9): gold readers, metrics, baseline extractors, report.

``gold`` reads the shared gold sets in their native formats, ``metrics`` scores an output text
against a gold page, ``baselines`` holds the BTE (§2.6.1) and boilerpipe DefaultExtractor
(Algorithm 2.1) reimplementations, ``extractors`` names every extractor the evaluation runs, and
``report`` runs them over the datasets and writes the tables.
"""
