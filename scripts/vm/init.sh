#!/bin/sh
# Guest /init for the accelstream test VM (busybox sh, PID 1).
# Installed as /init by run-vm.sh; reads /etc/vmtest.conf and
# /payload/tests.list.  Test output goes to /dev/ttyS1 (the TAP channel),
# the kernel console is /dev/ttyS0.  Never returns: it ends the VM through
# isa-debug-exit (QEMU status (v<<1)|1: 1 = pass, 3 = fail).

export PATH=/payload/bin:/bin:/sbin:/usr/bin:/usr/sbin
export HOME=/tmp TMPDIR=/tmp PAYLOAD=/payload

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts 2>/dev/null
mount -t tmpfs tmpfs /dev/shm 2>/dev/null
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
# What udev and a distribution's init leave in /dev, and the kernel's
# kselftest runner uses (its log goes to /dev/stdout).
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
[ -e /dev/stdin ] || ln -s /proc/self/fd/0 /dev/stdin
[ -e /dev/stdout ] || ln -s /proc/self/fd/1 /dev/stdout
[ -e /dev/stderr ] || ln -s /proc/self/fd/2 /dev/stderr

TEST_TIMEOUT=300
KILL_GRACE=10
[ -r /etc/vmtest.conf ] && . /etc/vmtest.conf

stty -F /dev/ttyS1 raw -echo -onlcr 2>/dev/null
exec 3>/dev/ttyS1
exec </dev/null

tap() { echo "$*" >&3; }
kmsg() { echo "accelstream-test: $*" > /dev/kmsg; }
# /proc/vmstat lags behind by per-CPU deltas (up to the stat threshold, so
# a handful of leaked pins would be invisible): fold them first.
vmstat_refresh() { echo 1 > /proc/sys/vm/stat_refresh 2>/dev/null; }
vmstat_get() { awk -v k="$1" '$1 == k { print $2; f=1 } END { if (!f) print 0 }' /proc/vmstat; }

# Kernel reports that fail a test when they appear in dmesg while it runs.
REPORT_RE='WARNING:|BUG:|kernel BUG at|Oops|general protection|KASAN|UBSAN|kmemleak: .*(suspected|new) memory leak|ODEBUG:|possible circular locking|possible recursive locking|INFO: task .* blocked|soft lockup|hard LOCKUP|RCU stall|detected stalls|self-detected stall|list_add corruption|list_del corruption|Call Trace|Kernel panic|sleeping function called from invalid context|inconsistent lock state|Unable to handle kernel'
# Known-harmless lines matching REPORT_RE (boot noise of debug kernels).
IGNORE_RE='ODEBUG: selftest passed|ODEBUG: [0-9]+ of [0-9]+ active objects replaced|accelstream-test: '
if [ -r /payload/dmesg.ignore ]; then
	while IFS= read -r l; do
		case "$l" in ''|'#'*) continue ;; esac
		IGNORE_RE="$IGNORE_RE|$l"
	done < /payload/dmesg.ignore
fi

failures=0
fail() { failures=$((failures + 1)); }

# scan_dmesg LABEL: report lines matching REPORT_RE that were logged after
# the last "accelstream-test: ready|end" mark (the whole log if none).
scan_dmesg() {
	dmesg > /tmp/.dmesg 2>/dev/null
	awk -v re="$REPORT_RE" -v ign="$IGNORE_RE" '
		/accelstream-test: (ready|end )/ { n = 0; next }
		{ buf[++n] = $0 }
		END { for (i = 1; i <= n; i++) if (buf[i] ~ re && buf[i] !~ ign) print buf[i] }
	' /tmp/.dmesg > /tmp/.hits
	if [ -s /tmp/.hits ]; then
		fail
		first=$(head -n 1 /tmp/.hits | sed 's/^\[[ 0-9.]*\] //; s/#/ /g')
		tap "not ok - kernel-report $1 # $first"
		sed 's/^/#   dmesg: /' /tmp/.hits | head -n 40 >&3
		return 1
	fi
	return 0
}

taint_letters() {
	t=$1; s=""; i=0
	for c in P F S R M B U D A W C I O E L K X T N; do
		[ $(( (t >> i) & 1 )) -eq 1 ] && s="$s$c"
		i=$((i + 1))
	done
	echo "${s:--}"
}

TAINT0=$(cat /proc/sys/kernel/tainted)
vmstat_refresh
PIN_ACQ0=$(vmstat_get nr_foll_pin_acquired)
PIN_REL0=$(vmstat_get nr_foll_pin_released)

names=""
if [ -r /payload/tests.list ]; then
	names=$(awk '!/^[ \t]*(#|$)/ { printf "%s ", $1 }' /payload/tests.list)
fi
debugfs=absent
grep -q '^[^ ]* /sys/kernel/debug debugfs ' /proc/mounts && debugfs=/sys/kernel/debug
tap "# accelstream-vm kernel=$(uname -r) cpus=$(nproc) taint0=$TAINT0 timeout=$TEST_TIMEOUT debugfs=$debugfs"
tap "# accelstream-plan $names"

# Anything the kernel reported while booting fails the run.
scan_dmesg boot
kmsg "ready"

# Kernel modules requested by kmods.list (already resolved + depmod'ed).
if [ -r /etc/vmtest.kmods ]; then
	while read -r m; do
		[ -n "$m" ] || continue
		if modprobe "$m" > /tmp/.modout 2>&1; then
			tap "# accelstream-kmod $m loaded"
		else
			fail; tap "not ok - kmod $m # modprobe failed: $(head -n1 /tmp/.modout)"
		fi
	done < /etc/vmtest.kmods
	scan_dmesg kmods
	kmsg "end kmods"
fi

cd /payload 2>/dev/null || cd /
if [ -r /payload/tests.list ]; then
	# fd 4: the list, so tests keep /dev/null as stdin
	exec 4< /payload/tests.list
	while read -r name cmd <&4; do
		case "$name" in ''|'#'*) continue ;; esac
		kmsg "start $name"
		tap "# accelstream-begin $name"
		t0=$(cut -d' ' -f1 /proc/uptime)
		timeout -s TERM -k "$KILL_GRACE" "$TEST_TIMEOUT" sh -c "$cmd" >&3 2>&3 </dev/null
		rc=$?
		t1=$(cut -d' ' -f1 /proc/uptime)
		secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
		tap "# accelstream-end $name rc=$rc time=${secs}s"
		case "$rc" in 0|4) ;; *) fail ;; esac
		scan_dmesg "$name"
		kmsg "end $name"
		cd /payload 2>/dev/null || cd /
	done
	exec 4<&-
fi

# kmemleak (debug kernels): one explicit scan at the end.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak 2>/dev/null
	cat /sys/kernel/debug/kmemleak > /tmp/.leaks 2>/dev/null
	if [ -s /tmp/.leaks ]; then
		fail
		tap "not ok - kmemleak # $(grep -c '^unreferenced object' /tmp/.leaks) unreferenced objects"
		head -n 60 /tmp/.leaks | sed 's/^/#   kmemleak: /' >&3
	else
		tap "# accelstream-check kmemleak ok"
	fi
fi

scan_dmesg post-run

TAINT=$(cat /proc/sys/kernel/tainted)
# O (4096) for an out-of-tree module, E (8192) as well where the kernel
# checks signatures (Debian's); nothing else.
if [ "$TAINT" -eq 0 ] || [ "$TAINT" -eq 4096 ] || [ "$TAINT" -eq 12288 ]; then
	tap "# accelstream-check taint ok $TAINT ($(taint_letters "$TAINT"))"
else
	fail
	tap "not ok - taint # tainted=$TAINT ($(taint_letters "$TAINT")), expected 0, 4096 (O) or 12288 (OE); at start $TAINT0"
fi

vmstat_refresh
PIN_ACQ=$(vmstat_get nr_foll_pin_acquired)
PIN_REL=$(vmstat_get nr_foll_pin_released)
dacq=$((PIN_ACQ - PIN_ACQ0)); drel=$((PIN_REL - PIN_REL0))
if [ "$PIN_ACQ" -eq "$PIN_REL" ] && [ "$dacq" -eq "$drel" ]; then
	tap "# accelstream-check pins ok acquired=$PIN_ACQ released=$PIN_REL (+$dacq this run)"
else
	fail
	tap "not ok - pins # nr_foll_pin_acquired=$PIN_ACQ nr_foll_pin_released=$PIN_REL (this run: +$dacq/+$drel; leaked $((PIN_ACQ - PIN_REL)))"
fi

# Full kernel log to the console for the record.
{
	echo "==== accelstream: full dmesg ===="
	dmesg
	echo "==== accelstream: end of dmesg ===="
} > /dev/ttyS0 2>&1

if [ "$failures" -eq 0 ]; then
	tap "# accelstream-verdict: PASS"
	v='\000'
else
	tap "# accelstream-verdict: FAIL ($failures problems)"
	v='\001'
fi
exec 3>&-
sync
printf "$v" | dd of=/dev/port bs=1 seek=244 count=1 2>/dev/null
# isa-debug-exit missing: QEMU exits 0 = not a pass on the host side.
poweroff -f
sleep 60
