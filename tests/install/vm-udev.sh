#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# VM test of the udev rule (busybox sh, TAP). The test initramfs has no
# udev, so the rule udev/60-accelstream.rules is turned into the busybox
# mdev(8) line that means the same ("accelstream root:accel 0660") by a
# sed over the rule file itself, and mdev applies it to the device as a
# hotplug event would. Then: the node is root:accel 0660, a member of the
# group accel (not root) opens it and issues ACCEL_IOC_GET_INFO, a user
# outside the group gets EACCES.
#
# Environment:
#   RULE      the rule file (default: udev/60-accelstream.rules next to bin/)
#   RUNAS     the static helper built from tests/install/runas.c
#             (default: runas-open on PATH)
#   ACCEL_KO  loaded with insmod when /dev/accelstream is missing (and
#             unloaded again at the end); else modprobe accelstream is tried
#   ACCEL_GID, MEMBER_UID, OTHER_UID   ids used (990, 1000, 1001)
# Exit: 0 all passed, 1 a failure, 4 skipped (no device, no module).

here=$(cd "$(dirname "$0")" && pwd)
RULE=${RULE:-$here/../udev/60-accelstream.rules}
RUNAS=${RUNAS:-runas-open}
ACCEL_GID=${ACCEL_GID:-990}
MEMBER_UID=${MEMBER_UID:-1000}
OTHER_UID=${OTHER_UID:-1001}
DEV=/dev/accelstream
NAME=accelstream

n=0
pass=0
failed=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n - $*"; }
nok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
finish() {
	echo "1..$n"
	echo "# Totals: pass:$pass fail:$failed xfail:0 xpass:0 skip:0 error:0"
	[ "$failed" -eq 0 ] && exit 0
	exit 1
}

echo "TAP version 13"

# The module: loaded by an earlier test, or by us.
loaded_here=0
if [ ! -c "$DEV" ]; then
	if [ -n "${ACCEL_KO:-}" ] && insmod "$ACCEL_KO" 2>/dev/null; then
		loaded_here=1
	elif modprobe "$NAME" 2>/dev/null; then
		loaded_here=1
	fi
	i=0
	while [ ! -c "$DEV" ] && [ $i -lt 20 ]; do sleep 0.1; i=$((i + 1)); done
fi
if [ ! -c "$DEV" ]; then
	echo "1..0 # SKIP $DEV missing and the module could not be loaded"
	exit 4
fi
cleanup_module() {
	[ $loaded_here = 1 ] && rmmod "$NAME" 2>/dev/null
}

# 1. The mdev line, made from the rule file by one sed: the rule's
#    KERNEL=="x", GROUP="g" and MODE="m" (in that order) become "x root:g m".
if [ ! -r "$RULE" ]; then
	nok "rule file readable # $RULE"
	cleanup_module
	finish
fi
conf=$(sed -n '/^[[:space:]]*#/d
s/.*KERNEL=="\([^"]*\)".*GROUP="\([^"]*\)".*MODE="\([^"]*\)".*/\1 root:\2 \3/p' "$RULE")
if [ "$conf" = "$NAME root:accel 0660" ]; then
	ok "mdev line from $(basename "$RULE"): $conf"
else
	nok "mdev line from $(basename "$RULE"): '$conf', expected '$NAME root:accel 0660'"
fi

# 2. The group, as a system would have it after "groupadd --system accel".
[ -f /etc/group ] || echo "root:x:0:" > /etc/group
grep -q '^accel:' /etc/group || echo "accel:x:$ACCEL_GID:$MEMBER_UID" >> /etc/group
ACCEL_GID=$(sed -n 's/^accel:[^:]*:\([0-9]*\):.*/\1/p' /etc/group)

# 3. Apply it: mdev in hotplug mode for this one device (mdev -s would
#    apply its default to every other node too).
# shellcheck disable=SC2012 # ls -ln is what busybox has for owner and mode
before=$(ls -ln "$DEV" | awk '{ print $1, $3, $4 }')
devpath=$(cd "/sys/class/misc/$NAME" 2>/dev/null && pwd -P)
devpath=${devpath#/sys}
saved=
if [ -f /etc/mdev.conf ]; then saved=/tmp/mdev.conf.$$; cp /etc/mdev.conf "$saved"; fi
# The static busybox cannot look names up (no NSS): give mdev the ids the
# names have in /etc/group, as udev would resolve them.
# shellcheck disable=SC2086 # split into fields on purpose
set -- $conf
grp=${2#*:}
gid=$(awk -F: -v g="$grp" '$1 == g { print $3 }' /etc/group)
echo "$1 0:${gid:-$grp} $3" > /etc/mdev.conf
if [ -n "$devpath" ] && ACTION=add DEVPATH=$devpath SUBSYSTEM=misc DEVNAME=$NAME \
		busybox mdev 2>/tmp/mdev.err; then
	ok "mdev applied the rule (DEVPATH=$devpath; before: $before)"
else
	nok "mdev applied the rule (DEVPATH='$devpath')"
	sed 's/^/#   /' /tmp/mdev.err
fi
if [ -n "$saved" ]; then mv "$saved" /etc/mdev.conf; else rm -f /etc/mdev.conf; fi

# 4. The node: a character device, owner root, group accel, mode 0660.
# shellcheck disable=SC2012,SC2046 # split into fields on purpose
set -- $(ls -ln "$DEV")
if [ "$1" = "crw-rw----" ] && [ "$3" = 0 ] && [ "$4" = "$ACCEL_GID" ]; then
	ok "$DEV is root:accel 0660 ($1 $3:$4)"
else
	nok "$DEV is root:accel 0660 # got $1 $3:$4, accel is $ACCEL_GID"
fi

# 5. Who may open it.
expect_open() {
	what=$1 want=$2; shift 2
	out=$("$RUNAS" "$@" 2>&1)
	case "$out" in
	"$want"*) ok "$what: $out" ;;
	*) nok "$what: '$out', expected '$want...'" ;;
	esac
}
expect_open "a member of accel (uid $MEMBER_UID) opens it and gets the info" \
	"open=0 get_info=0 abi=" "$MEMBER_UID" "$MEMBER_UID" "$ACCEL_GID"
expect_open "accel as primary group (gid $ACCEL_GID) opens it" \
	"open=0 get_info=0" "$MEMBER_UID" "$ACCEL_GID" -
expect_open "a non-member (uid $OTHER_UID) gets EACCES" \
	"open=EACCES" "$OTHER_UID" "$OTHER_UID" -
expect_open "root opens it" "open=0 get_info=0" 0 0 -

# Leave the node as the module made it, for the tests that follow.
# shellcheck disable=SC2086 # split into fields on purpose
set -- $before
chown 0:"$3" "$DEV" 2>/dev/null
case "$1" in crw-rw----) chmod 0660 "$DEV" ;; crw-------) chmod 0600 "$DEV" ;; esac
cleanup_module
finish
