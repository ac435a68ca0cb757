#!/bin/sh
# `mxk rec ls|cat|verify` (tools/mxk/cmd_rec.c) on a RecordIO file packed with
# `mxk im2rec --pass-through` from three images written by write_image.c: the
# listing (offsets from the format's closed form: 8-byte head, 24-byte IRHeader,
# payload padded to 4 bytes), payloads byte for byte, and every kind of damage
# reported with its record and byte offset (exit status 1).
#
#   rec_test.sh CASE MXK JSON_CHECK WRITE_IMAGE WORK_DIR
# POSIX sh only.
set -u

if [ $# -ne 5 ]; then
    echo "usage: rec_test.sh CASE MXK JSON_CHECK WRITE_IMAGE WORK_DIR" >&2
    exit 2
fi
CASE=$1 MXK=$2 JSON_CHECK=$3 WRITE_IMAGE=$4 WORK=$5

. "$(dirname "$0")/cli_lib.sh"
cli_begin "$WORK" img
cd "$WORK" || exit 1

run() {
    last="$*"
    rc=0
    "$MXK" "$@" >"$OUT" 2>"$ERR" || rc=$?
}

"$WRITE_IMAGE" img/a.png 8 6 3 1 && "$WRITE_IMAGE" img/b.jpg 10 7 3 2 &&
    "$WRITE_IMAGE" img/c.png 5 9 1 3 || fail "cannot write the images"
printf '5\t1\ta.png\n6\t2.5\tb.jpg\n7\t3\tc.png\n' >d.lst
run im2rec --pass-through d img
expect_rc 0
SA=$(wc -c <img/a.png) SB=$(wc -c <img/b.jpg) SC=$(wc -c <img/c.png)
# a record of payload P bytes takes 8 + (24 + P rounded up to 4) bytes
OB=$((8 + (24 + SA + 3) / 4 * 4))
OC=$((OB + 8 + (24 + SB + 3) / 4 * 4))
END=$((OC + 8 + (24 + SC + 3) / 4 * 4))

case $CASE in
rec_ls)
    run rec ls d.rec
    expect_rc 0
    {
        printf '%-8s %12s %4s %-12s %8s %6s %-6s %-14s %s\n' key offset flag label id id2 format size bytes
        printf '%-8s %12s %4s %-12s %8s %6s %-6s %-14s %s\n' 5 0 0 1 5 0 png 8x6x3 "$SA"
        printf '%-8s %12s %4s %-12s %8s %6s %-6s %-14s %s\n' 6 $OB 0 2.5 6 0 jpeg 10x7x3 "$SB"
        printf '%-8s %12s %4s %-12s %8s %6s %-6s %-14s %s\n' 7 $OC 0 3 7 0 png 5x9x1 "$SC"
        echo "3 records, $END bytes, index d.idx"
    } | cmp -s - "$OUT" || fail "unexpected listing"
    run --json rec ls d.rec
    expect_rc 0
    json "file=d.rec" "idx=d.idx" "count=3" "bytes=$END" "records.1.offset=$OB" "records.1.label=2.5" \
        "records.2.channels=1" "records.2.bytes=$SC"
    # without the index: no keys
    mv d.idx keep.idx
    run --json rec ls d.rec
    expect_rc 0
    json "idx=null" "records.0.key=null" "records.2.offset=$OC"
    # another index by --idx, one key pointing at the last record
    printf '42\t%d\n' $OC >other.idx
    run --json rec ls d.rec --idx other.idx
    json "idx=other.idx" "records.0.key=null" "records.2.key=42"
    echo "ok [$CASE]: the records listed"
    ;;
rec_cat)
    run rec cat d.rec --index 6 --output b.jpg
    expect_rc 0
    cmp -s b.jpg img/b.jpg || fail "--index 6 is not b.jpg"
    out_has "wrote b.jpg: $SB bytes (jpeg 10x7x3), record id 6"
    run rec cat d.rec --offset $OC
    expect_rc 0
    cmp -s "$OUT" img/c.png || fail "--offset $OC is not c.png"
    run --json rec cat d.rec --offset 0 -o a.png
    expect_rc 0
    json "output=a.png" "format=png" "width=8" "label=1" "bytes=$SA"
    cmp -s a.png img/a.png || fail "--offset 0 is not a.png"
    run rec cat d.rec --index 9
    expect_rc 1
    err_is "mxk: error: key 9 is not in 'd.idx'"
    run rec cat d.rec --offset 8
    expect_rc 1
    err_is "mxk: error: 'd.rec': bad magic 0x00000000 at byte 8 (expected 0xced7230a)"
    run rec cat d.rec --offset $END
    expect_rc 1
    err_is "mxk: error: 'd.rec': no record at byte $END (the end of the file)"
    mv d.idx keep.idx
    run rec cat d.rec --index 5
    expect_rc 1
    err_is "mxk: error: 'd.rec' has no index (FILE.idx or --idx): use --offset"
    run rec cat d.rec
    expect_rc 2
    err_first "mxk rec: cat needs one of --index K or --offset O"
    run rec cat d.rec --offset 0 --json
    expect_rc 2
    err_first "mxk rec: cat --json needs --output (the payload is binary)"
    echo "ok [$CASE]: payloads written byte for byte"
    ;;
rec_verify)
    run rec verify d.rec
    expect_rc 0
    out_has "d.rec: OK, 3 records, 3 images decoded, every record keyed in d.idx"
    run --json rec verify d.rec
    json "ok=true" "records=3" "images=3" "keys=3" "bytes=$END"
    # a damaged image: 24 bytes of a.png's pixel data overwritten
    cp d.rec bad.rec
    cp d.idx bad.idx
    printf 'XXXXXXXXXXXXXXXXXXXXXXXX' | dd of=bad.rec bs=1 seek=$((8 + 24 + SA - 40)) conv=notrunc 2>/dev/null
    run rec verify bad.rec
    expect_rc 1
    err_first "mxk: error: 'bad.rec': record 0 (id 5) at byte 0: corrupt PNG: bad adaptive filter value"
    # a truncated file
    cp d.rec bad.rec
    truncate -s $((END - 5)) bad.rec
    rm bad.idx
    run rec verify bad.rec
    expect_rc 1
    err_is "mxk: error: 'bad.rec': record at byte $OC has length $((24 + SC)) but only $((END - 5 - OC - 8)) bytes follow"
    # an index pointing inside a record, and one missing a record
    cp d.rec bad.rec
    printf '5\t0\n6\t8\n7\t%d\n' $OC >bad.idx
    run rec verify bad.rec
    expect_rc 1
    err_is "mxk: error: 'bad.idx': key 6 points at byte 8 of 'bad.rec', which is not the start of a record: 'bad.rec': bad magic 0x00000000 at byte 8 (expected 0xced7230a)"
    printf '5\t0\n7\t%d\n' $OC >bad.idx
    run rec verify bad.rec
    expect_rc 1
    err_is "mxk: error: 'bad.rec': record 1 at byte $OB has no key in 'bad.idx'"
    # a record that is not an image
    printf 'not an image' >img/t.png
    printf '0\t0\tt.png\n' >t.lst
    run im2rec --pass-through t img
    run rec verify t.rec
    expect_rc 1
    err_is "mxk: error: 't.rec': record 0 (id 0) at byte 0: not a JPEG or PNG image (first bytes 6E 6F 74 20)"
    run rec check d.rec
    expect_rc 2
    err_first "mxk rec: unknown action 'check': ls, cat or verify"
    run rec verify
    expect_rc 2
    err_first "mxk rec: give the file (FILE.rec)"
    run rec verify missing.rec
    expect_rc 1
    err_is "mxk: error: cannot open 'missing.rec': No such file or directory"
    echo "ok [$CASE]: damage reported with its record and offset"
    ;;
rec_damage)
    # every 13th byte of the file in turn set to 0xff (head, header, payload,
    # padding): verify ends with status 0 or 1 and one error line, never a crash
    i=0
    while [ $i -lt "$END" ]; do
        cp d.rec bad.rec
        cp d.idx bad.idx
        printf '\377' | dd of=bad.rec bs=1 seek=$i conv=notrunc 2>/dev/null
        run rec verify bad.rec
        case $rc in
        0) ;;
        1) [ "$(wc -l <"$ERR")" -eq 1 ] && err_first "$(grep '^mxk: error: ' "$ERR")" ||
            fail "byte $i: not one error line" ;;
        *) fail "byte $i: exit status $rc" ;;
        esac
        run rec ls bad.rec
        [ "$rc" -le 1 ] || fail "ls, byte $i: exit status $rc"
        i=$((i + 13))
    done
    echo "ok [$CASE]: damaged files give an error, never a crash"
    ;;
*)
    echo "unknown case $CASE" >&2
    exit 2
    ;;
esac
