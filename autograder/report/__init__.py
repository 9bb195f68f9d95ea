"""The class report (`course report`): what a class got wrong, at a glance, and which submissions
look copied.

It reads the results files `course grade` writes (the nbgrader bridge and the Gradescope runner
write the same format) and writes a static HTML page, its figures as PNG files and its tables as
CSV. One job per module:

* `loading`: results files (and the submitted files behind them) into plain records;
* `stats`: score distributions, per-test pass rates and discrimination, misconceptions, crashes
  and limits, load notes, students at risk;
* `similarity`: the code of the graded components, the released stub code as boilerplate, and
  copydetect's similarity of every pair worth scoring;
* `figures`: the matplotlib (Agg) figures;
* `tables`: the CSV files;
* `page`: the HTML page (Jinja2, `templates/report.html`, autoescaped);
* `build`: all of it for one assignment or a folder of them (`build.write_report`).
"""
