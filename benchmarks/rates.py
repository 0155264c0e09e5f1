"""Write measured unit costs into nadcore's rates file (`catalog.RATES_FILE`, which `nadcore plan` prices
with): each entry gets its seconds, today's date and how it was measured."""

import datetime
import json

from nadcore import catalog, store


def write(updates, source):
    """Set `updates = {(table, key): seconds}` in the rates file, each with `source` and today's date."""
    tables = json.loads(catalog.RATES_FILE.read_text())
    today = datetime.date.today().isoformat()
    for (table, key), seconds in updates.items():
        if table not in tables:
            raise ValueError(f"table must be one of {', '.join(k for k in tables if k != 'about')}; got {table!r}")
        tables[table][key] = {"s": float(f"{seconds:.3g}"), "measured": today,
                              "source": f"{source} on {store.machine()}"}
    catalog.RATES_FILE.write_text(json.dumps(tables, indent=1) + "\n")
    print(f"wrote {len(updates)} rates to {catalog.RATES_FILE}")
