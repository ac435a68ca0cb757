#!/bin/sh
# outside_refs_test.sh SOURCE_DIR: the tree stands on its own. Fails, listing each
# line, when a tracked file (comment, document, script, test) cites a document that
# is not in the repository: working notes ("digest", "§" sections, "seed" pages, a
# "brief", "issue N") or files beside the checkout (../shared, an absolute /work/).
# Cite the upstream MXNet file or page instead (e.g. src/kvstore/kvstore_local.h,
# docs/static_site/src/pages/api/architecture/note_memory.md), or put the text in
# docs/. This script is the one file allowed to name the patterns.
set -eu
src=${1:?usage: outside_refs_test.sh SOURCE_DIR}
cd "$src"
# The repository's files: tracked, and untracked ones git does not ignore.
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "SKIP: $src is not a git checkout (the files to check are git's)"
    exit 77
fi
files=$(git ls-files -co --exclude-standard | grep -v '^tests/tree/outside_refs_test\.sh$' || true)
# Any case: notes, their sections and the places they live.
nocase='\bdigests?\b|§|\bdesign brief\b|\bthe brief\b|\bissue #?[0-9]+\b|'
nocase=$nocase'\.\./shared\b|(?<![\w}.$-])/work/|\bshared/(?:reference|fixtures|peers|design)\b|'
nocase=$nocase"\\bseed(?:'s)? (?:notes?|overview|executor|kvstore|tutorial|pages?|design|pseudo|example|§)|"
nocase=$nocase'\bthe seed'"'"'s\b|\bseed (?:[0-9]{3}|E[0-9]|MLP)\b|\bnote_(?:memory|engine|data_loading)\b(?!\.md)'
# Exact case: the tags of the notes.
exact='\bBRIEF\b|\[SEED|\[UPSTREAM'
hits=$(printf '%s\n' "$files" | tr '\n' '\0' |
    xargs -0 grep -InP -e "(?i:$nocase)|$exact" -- 2>/dev/null || true)
if [ -n "$hits" ]; then
    echo "references to documents outside the repository:" >&2
    printf '%s\n' "$hits" >&2
    exit 1
fi
echo "no references to documents outside the repository"
