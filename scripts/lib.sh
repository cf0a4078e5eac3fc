# Shared set-up for MAMLab's scripts: find Swift, install the system packages MAMLab needs.
# Sourced, not run.

MAMLAB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export MAMLAB_ROOT

# System packages: libseccomp for the app sandbox, pkg-config to find it, plistutil as a
# second reader of the plists mamconfigurator writes, libsystemd's sd-bus for bench-broker's
# D-Bus peer (built with everything else), python3 for the Python client (clients/python) and its
# tests, Chromium to render the matrix's HTML report in a test (poppler-utils to read its printout), xmllint and Python's jsonschema to
# validate the matrix's JUnit and SARIF reports against docs/schemas in a test, dpkg-dev and patchelf
# for scripts/package (dpkg-shlibdeps, a run path of $ORIGIN) and man-db for its test's `man mamlaunch`.
MAMLAB_PACKAGES=(libseccomp-dev pkg-config libplist-utils libsqlite3-dev libsystemd-dev python3 chromium poppler-utils libxml2-utils python3-jsonschema dpkg-dev patchelf man-db)

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
