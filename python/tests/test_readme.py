"""The Python snippet of README.md ("Use from Python") runs as written."""
import contextlib
import io
import os
import re

from conftest import REPO


def readme_snippet():
    text = (REPO / "README.md").read_text()
    section = text.split("## Use from Python", 1)
    assert len(section) == 2, "README.md has no '## Use from Python' section"
    m = re.search(r"```python\n(.*?)```", section[1], re.S)
    assert m, "no ```python block in README's 'Use from Python' section"
    return m.group(1)


def test_readme_snippet_is_five_lines_and_runs(cache_dir):
    code = readme_snippet()
    assert len(code.strip().splitlines()) == 5, code
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(REPO)  # the snippet names a model by its path in the repository
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
    finally:
        os.chdir(cwd)
    lines = out.getvalue().splitlines()
    assert lines[0] == "['sepal_length', 'sepal_width', 'petal_length', 'petal_width']", lines
    # iris row 5.1, 3.5, 1.4, 0.2 is class 0 for scikit-learn's model (Fixtures/classical); the
    # probabilities print as Core ML's dict of int labels.
    assert lines[1].startswith("0 {0: "), lines
