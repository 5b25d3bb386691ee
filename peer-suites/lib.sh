# Shared by the peer-suite runners: compare what failed with the list of
# expected failures (--expect FILE) and set the exit status.
#
# summarise FAILED_FILE PASSED_NAMES: FAILED_FILE holds one failed test a
# line; PASSED_NAMES the names that passed, one a line. Uses $expect.
summarise() {
    local failed="$1" passed="$2" known unexpected fixed
    known="$(mktemp)"
    if [ -n "$expect" ]; then
        sed -e '/^[[:space:]]*#/d' -e 's/[[:space:]][[:space:]]*# .*$//' -e '/^[[:space:]]*$/d' "$expect" | sort -u >"$known"
    fi
    unexpected="$(comm -23 "$failed" "$known")"
    fixed="$(printf '%s\n' "$passed" | sort -u | comm -12 - "$known")"
    rm -f "$known"
    echo
    echo "== $(wc -l <"$failed") failed, $(printf '%s' "$passed" | grep -c .) passed"
    if [ -n "$fixed" ]; then
        echo "== listed in $expect as failing, but passed (remove them from the list):"
        printf '   %s\n' $fixed
    fi
    if [ -n "$unexpected" ]; then
        echo "== FAILED, not expected to:"
        printf '%s\n' "$unexpected" | sed 's/^/   /'
        return 1
    fi
    echo "== no unexpected failure"
    return 0
}
