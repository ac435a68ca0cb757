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
# "Commands:" lists "  NAME  description" lines up to the next empty line.
"$mxk" --help | sed -n '/^Commands:/,/^$/p' |
    sed -n 's/^  \([a-z][a-z0-9-]*\)  *\(.*\)$/\1 \2/p' | grep -v '^help ' >"$tmp/commands"

# SEE ALSO: mxk.1 names every command's page, each command's page names mxk(1).
{
    printf '[SEE ALSO]\n'
    sed 's/^\([^ ]*\) .*/.BR mxk-\1 (1),/' "$tmp/commands" | sed '$s/,$//'
} >"$tmp/main.h2m"
printf '[SEE ALSO]\n.BR mxk (1)\n' >"$tmp/command.h2m"

# gen NAME DESCRIPTION PROGRAM INCLUDE: one page, OUTDIR/NAME.1, titled NAME.
gen() {
    help2man --no-info --no-discard-stderr --section=1 --name="$2" \
        --version-string="$1 $version" --include="$4" --output="$tmp/$1.1" "$3"
    mv "$tmp/$1.1" "$out/$1.1"
}

gen mxk "the mxk deep-learning framework's command line" "$mxk" "$tmp/main.h2m"
while read -r cmd desc; do
    # help2man runs PROGRAM --help and PROGRAM --version: a wrapper per command.
    printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$mxk" "$cmd" >"$tmp/mxk-$cmd"
    chmod +x "$tmp/mxk-$cmd"
    gen "mxk-$cmd" "$desc" "$tmp/mxk-$cmd" "$tmp/command.h2m"
done <"$tmp/commands"
