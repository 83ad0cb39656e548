#!/usr/bin/env bash
# The "links" column of docs/architecture.md's module table against the build: for each lib/ module,
# the modules its libraries link (CMake's LINK_LIBRARIES of each gpuscale_library target, written at
# configure time to module-links.txt) must be exactly the ones the table names.
set -euo pipefail
exec python3 - "$@" <<'PY'
import re
import sys

links_file, doc_file = sys.argv[1], sys.argv[2]

modules = {}  # module -> targets
links = {}    # target -> linked names
for line in open(links_file):
    words = line.split()
    if len(words) < 2:
        continue
    module, target = words[0], words[1]
    modules.setdefault(module, []).append(target)
    links[target] = words[2:]
module_of = {t: m for m, ts in modules.items() for t in ts}
built = {}
for module, targets in modules.items():
    linked = set()
    for target in targets:
        linked |= {module_of[name] for name in links[target] if name in module_of}
    linked.discard(module)
    built[module] = linked

documented = {}
in_table = False
for line in open(doc_file):
    if line.startswith("## "):
        in_table = line.strip() == "## Modules"
        continue
    row = re.match(r"\| `lib/([a-z0-9_]+)` \|.*\| ([^|]*) \|\s*$", line)
    if in_table and row:
        cell = row.group(2).strip()
        documented[row.group(1)] = set() if cell == "—" else {m.strip() for m in cell.split(",")}

failures = []
for module in sorted(set(built) | set(documented)):
    want = built.get(module)
    have = documented.get(module)
    if want is None:
        failures.append(f"lib/{module}: in the table, but the build has no such module")
    elif have is None:
        failures.append(f"lib/{module}: missing from the table (links {', '.join(sorted(want)) or '—'})")
    elif want != have:
        failures.append(f"lib/{module}: the table says {', '.join(sorted(have)) or '—'}, "
                        f"the build links {', '.join(sorted(want)) or '—'}")
    else:
        print(f"ok   lib/{module}: {', '.join(sorted(want)) or '—'}")
for failure in failures:
    print("FAIL " + failure)
if failures:
    sys.exit(1)
print(f"module table: {len(built)} modules as the build links them")
PY
