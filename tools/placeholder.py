"""Write a placeholder chapter notebook: the standard parameters cell and a note that it is not written yet."""
import sys
import nbformat as nbf

stem, title = sys.argv[1], sys.argv[2]
nb = nbf.v4.new_notebook()
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
params = nbf.v4.new_code_cell(
    'scale = "smoke"  # "smoke" (CPU, minutes), "medium" or "paper" (published settings)\n'
    'device = "auto"  # "auto", "cpu" or "cuda"\n'
    "seed = 0\n"
    'results_dir = "../results"\n'
    'data_root = "../data"'
)
params.metadata["tags"] = ["parameters"]
nb.cells = [
    nbf.v4.new_markdown_cell(f"# {title}\n\n```{{note}}\nThis chapter is not written yet.\n```"),
    params,
    nbf.v4.new_code_cell("from nadcore.presets import preset, check_scale\n\ncheck_scale(scale)\nprint(f\"scale={scale} device={device} seed={seed}\")"),
]
nbf.write(nb, f"book/{stem}.ipynb")
