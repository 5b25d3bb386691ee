#!/usr/bin/env bash
# Fetches the JUnit XML schema that Jenkins reads (junit-10.xsd), against
# which the tests check `dbmeter run --junit FILE`. pytest's source package
# on PyPI carries it (testing/example_scripts/junit-10.xsd, MIT); the
# package's SHA-256 from PyPI's simple index is checked before it is opened.
#
# Usage: peer-suites/junit-schema.sh [DEST]
#   DEST defaults to ~/.cache/dbmeter-peers/junit-10.xsd; nothing is fetched
#   when it is there already. Prints its path.
set -euo pipefail

dest="${1:-$HOME/.cache/dbmeter-peers/junit-10.xsd}"
if [ -s "$dest" ]; then
    echo "$dest"
    exit 0
fi
mkdir -p "$(dirname "$dest")"
python3 - "$dest" <<'PY'
import hashlib, io, os, re, sys, tarfile, urllib.request

VERSION = "8.3.3"
NAME = f"pytest-{VERSION}.tar.gz"
MEMBER = f"pytest-{VERSION}/testing/example_scripts/junit-10.xsd"
dest = sys.argv[1]
# PyPI's simple index (PEP 503): each file's link ends in #sha256=DIGEST.
with urllib.request.urlopen("https://pypi.org/simple/pytest/", timeout=60) as r:
    page = r.read().decode()
m = re.search(r'href="([^"#]*/' + re.escape(NAME) + r')#sha256=([0-9a-f]{64})"', page)
if not m:
    sys.exit(f"junit-schema: {NAME} is not in PyPI's index")
url, digest = m.groups()
with urllib.request.urlopen(url, timeout=120) as r:
    data = r.read()
if hashlib.sha256(data).hexdigest() != digest:
    sys.exit(f"junit-schema: {url}: SHA-256 differs from PyPI's index")
with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as t:
    xsd = t.extractfile(MEMBER).read()
with open(dest + ".part", "wb") as f:
    f.write(xsd)
os.replace(dest + ".part", dest)
PY
echo "$dest"
