"""What a built corpus is: the thesis' corpus measurements (`corpus_stats`: the funnel, duplicate
n-grams before and after de-duplication, stage times, the summary) and the self-contained HTML
report drawn from them and from the evaluation's tables (`html_report`: its `sections`, the
document `samples`, the page's `rendering`, and the `joins` of the stage tables' verdicts it shows).
"""
