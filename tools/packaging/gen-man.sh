#!/bin/sh
# gen-man.sh MXK OUTDIR: writes the man pages of the mxk command line, generated
# from its own --help with help2man (so they never drift from it): OUTDIR/mxk.1
# and one OUTDIR/mxk-COMMAND.1 for each command listed under "Commands:" in
# `mxk --help` (all but `help`). Run at build time by tools/packaging/CMakeLists.txt.
set -eu
mxk=$1
out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"

version=$("$mxk" --version | sed -n '1s/^mxk //p')

# gen NAME DESCRIPTION PROGRAM: one page, OUTDIR/NAME.1, titled NAME.
gen() {
    help2man --no-info --no-discard-stderr --section=1 --name="$2" \
        --version-string="$1 $version" --output="$tmp/$1.1" "$3"
    mv "$tmp/$1.1" "$out/$1.1"
}

gen mxk "the mxk deep-learning framework's command line" "$mxk"
# "Commands:" lists "  NAME  description" lines up to the next empty line.
"$mxk" --help | sed -n '/^Commands:/,/^$/p' | sed -n 's/^  \([a-z][a-z0-9-]*\)  *\(.*\)$/\1 \2/p' |
    while read -r cmd desc; do
        [ "$cmd" = help ] && continue
        # help2man runs PROGRAM --help and PROGRAM --version: a wrapper per command.
        printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$mxk" "$cmd" >"$tmp/mxk-$cmd"
        chmod +x "$tmp/mxk-$cmd"
        gen "mxk-$cmd" "$desc" "$tmp/mxk-$cmd"
    done
