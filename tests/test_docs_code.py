"""The documentation's code is code (issue 60): every Python block of README.md and book/running.md runs, at a
smoke size (the substitutions below, each a literal of the block), and does what its text says."""

import re
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

# {file: [(the block's own text, its smoke-size stand-in)]}: each must occur in its block, so an edit to the
# documentation that drops one fails here rather than running at full size.
SMOKE = {
    "README.md": [('num_networks=200', 'num_networks=24'), ("4000, sigma", "400, sigma"),
                  ("2000, sigma", "200, sigma"), ('"epochs": 10', '"epochs": 1')],
    "book/running.md": [("2000, input_shape", "24, input_shape"), ("epochs=20", "epochs=1"),
                        ("[(0, 1), (4, 4), (8, 0), (16, 16)]", "[(0, 1)]"), ("num_seeds=2", "num_seeds=1, n=200"),
                        ("[0, 16, 256], recipe,", "[0, 16], recipe, n=200,")],
}


def python_blocks(path):
    """The ```python blocks of the file at `path`."""
    return re.findall(r"^```python\n(.*?)^```", (ROOT / path).read_text(), flags=re.S | re.M)


@pytest.mark.slow   # ~15 s a file on a quiet 2-core CPU: make test, not make check
@pytest.mark.filterwarnings("ignore::nadcore.nads.NADTrustWarning")   # 24 networks: noise, as the text expects
@pytest.mark.parametrize("path", sorted(SMOKE))
def test_every_python_block_of_the_docs_runs(path, tmp_path, monkeypatch, capsys):
    blocks = python_blocks(path)
    assert blocks, f"{path} has no python block"
    monkeypatch.chdir(tmp_path)
    plt.close("all")
    for block in blocks:
        for text, smoke in SMOKE[path]:
            assert text in "".join(blocks), f"{path}: the smoke substitution {text!r} no longer matches the block"
            block = block.replace(text, smoke)
        exec(compile(block, str(ROOT / path), "exec"), {"__name__": "__docs__"})
    out = capsys.readouterr().out
    if path == "README.md":      # "NAD 0 is learnt well above chance, NAD 512 stays at chance" (at full size)
        assert re.search(r"NAD 0: \d+ % test accuracy\nNAD 512: \d+ % test accuracy", out), out
    else:                        # the grid and the spectrum each on a figure of its own, then the sweep's table
        figures = [plt.figure(n) for n in plt.get_fignums()]
        assert len(figures) == 2 and figures[1].axes[0].get_ylabel() == r"$\lambda_i / \lambda_0$"
        assert "split-half overlap" in out and (tmp_path / "results" / "nad_chunks").is_dir()
        assert re.search(r"NAD 0: +\d+\.\d % test accuracy \(1 seed\)\nNAD 16: ", out), out
    plt.close("all")
